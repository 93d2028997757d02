#include "engine/collective/sharedmemorycollective.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace trainbench::engine {

namespace {
constexpr size_t kLine = 16;  // floats per 64-byte cache line

// Slice k of n floats over `ranks` ranks, in whole cache lines except for the last.
std::pair<size_t, size_t> slice(size_t n, int ranks, int k) {
    const size_t lines = (n + kLine - 1) / kLine;
    const size_t lo = std::min(n, lines * static_cast<size_t>(k) / static_cast<size_t>(ranks) * kLine);
    const size_t hi = std::min(n, lines * static_cast<size_t>(k + 1) / static_cast<size_t>(ranks) * kLine);
    return {lo, hi};
}
}  // namespace

SharedMemoryGroup::SharedMemoryGroup(int size)
    : size_(size), barrier_(size), buffers_(static_cast<size_t>(size)), counts_(static_cast<size_t>(size)) {
    if (size < 1) throw std::invalid_argument("a collective group needs at least one rank");
}

SharedMemoryCollective::SharedMemoryCollective(std::shared_ptr<SharedMemoryGroup> group, int rank)
    : group_(std::move(group)), rank_(rank) {
    if (rank < 0 || rank >= group_->size())
        throw std::invalid_argument("rank " + std::to_string(rank) + " is outside a group of " +
                                    std::to_string(group_->size()));
}

void SharedMemoryCollective::publish(float* data, size_t count) {
    SharedMemoryGroup& g = *group_;
    g.buffers_[static_cast<size_t>(rank_)] = data;
    g.counts_[static_cast<size_t>(rank_)] = count;
    const auto t0 = std::chrono::steady_clock::now();
    g.barrier_.arrive_and_wait();
    peerWait_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int k = 0; k < g.size_; ++k) {
        if (g.counts_[static_cast<size_t>(k)] != count) {
            // Every rank sees the mismatch and throws, after a last barrier so none is left waiting
            // in a later one.
            const std::string msg = "collective called with different sizes: rank " + std::to_string(rank_) + " has " +
                                    std::to_string(count) + " floats, rank " + std::to_string(k) + " has " +
                                    std::to_string(g.counts_[static_cast<size_t>(k)]);
            g.barrier_.arrive_and_wait();
            throw std::logic_error(msg);
        }
    }
}

void SharedMemoryCollective::allReduceSum(float* data, size_t count) {
    SharedMemoryGroup& g = *group_;
    const int n = g.size_;
    if (n == 1) return;
    publish(data, count);
    // Reduce-scatter: this rank sums its slice over all ranks, b0 + b1 + ... in rank order, and
    // writes it into its own buffer (which the others only read outside this slice). A block is
    // summed in scratch first because this rank's own values are one of the inputs.
    const auto [lo, hi] = slice(count, n, rank_);
    constexpr size_t kBlock = 1024;
    alignas(64) float acc[kBlock];
    for (size_t b = lo; b < hi; b += kBlock) {
        const size_t len = std::min(kBlock, hi - b);
        const float* first = g.buffers_[0] + b;
        for (size_t i = 0; i < len; ++i) acc[i] = first[i];
        for (int k = 1; k < n; ++k) {
            const float* in = g.buffers_[static_cast<size_t>(k)] + b;
            for (size_t i = 0; i < len; ++i) acc[i] += in[i];
        }
        std::memcpy(data + b, acc, len * sizeof(float));
    }
    g.barrier_.arrive_and_wait();
    // All-gather: copy every other rank's finished slice.
    for (int k = 0; k < n; ++k) {
        if (k == rank_) continue;
        const auto [klo, khi] = slice(count, n, k);
        if (khi > klo) std::memcpy(data + klo, g.buffers_[static_cast<size_t>(k)] + klo, (khi - klo) * sizeof(float));
    }
    // No rank may return (and change its buffer) while another still copies from it.
    g.barrier_.arrive_and_wait();
}

void SharedMemoryCollective::broadcast(float* data, size_t count, int root) {
    SharedMemoryGroup& g = *group_;
    if (root < 0 || root >= g.size_) throw std::invalid_argument("broadcast root " + std::to_string(root) + " is not a rank");
    if (g.size_ == 1) return;
    publish(data, count);
    if (rank_ != root && count > 0) std::memcpy(data, g.buffers_[static_cast<size_t>(root)], count * sizeof(float));
    g.barrier_.arrive_and_wait();
}

void SharedMemoryCollective::barrier() { group_->barrier_.arrive_and_wait(); }

}  // namespace trainbench::engine
