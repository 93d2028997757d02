#include "engine/strategy/gradientsync.h"

#include "engine/instrument/instrument.h"

#include <chrono>
#include <stdexcept>
#include <string>

#include "engine/emulation/virtualclock.h"
#include "engine/util/threadname.h"
#include "engine/util/elapsed.h"

namespace trainbench::engine {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

std::vector<GradientSync::Bucket> GradientSync::plan(const std::vector<Span>& spans, size_t bucketBytes) {
    std::vector<int64_t> counts;
    for (size_t i = 0; i < spans.size(); ++i) {
        const auto [offset, count] = spans[i];
        if (i > 0) {
            const int64_t prevOffset = spans[i - 1].first;
            if (offset + count != prevOffset)
                throw std::invalid_argument("gradient span " + std::to_string(i) + " at " + std::to_string(offset) +
                                            " does not end where the previous one begins (" +
                                            std::to_string(prevOffset) + ")");
        }
        counts.push_back(count);
    }
    // The emulator's virtual clock charges the same buckets: one rule for both.
    std::vector<Bucket> out;
    size_t next = 0;
    for (const GradientBucket& g : gradientBuckets(counts, static_cast<double>(bucketBytes))) {
        next += static_cast<size_t>(g.layers);
        out.push_back({spans[next - 1].first, g.floats, g.layers});  // spans run backwards: the last is lowest
    }
    return out;
}

GradientSync::GradientSync(Collective& collective, float* grads, const std::vector<Span>& spans, size_t bucketBytes,
                           bool overlap)
    : collective_(collective), grads_(grads), buckets_(plan(spans, bucketBytes)), overlap_(overlap) {
    pendingLayers_.resize(buckets_.size());
    beginStep();
    if (overlap_ && collective_.size() > 1) thread_ = std::thread([this] { commLoop(); });
}

GradientSync::~GradientSync() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void GradientSync::beginStep() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t b = 0; b < buckets_.size(); ++b) pendingLayers_[b] = buckets_[b].layers;
    nextSpanBucket_ = 0;
    ready_ = 0;
    reduced_ = 0;
    commSeconds_ = 0.0;
    peerWaitAtStart_ = collective_.peerWaitSeconds();
}

void GradientSync::markReady(size_t bucket) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_ = bucket + 1;
    }
    cv_.notify_all();
}

void GradientSync::spanReady(int64_t offset, int64_t count) {
    if (nextSpanBucket_ >= buckets_.size())
        throw std::logic_error("gradient span at " + std::to_string(offset) + " reported after all buckets were complete");
    const Bucket& b = buckets_[nextSpanBucket_];
    if (offset < b.offset || offset + count > b.offset + b.count)
        throw std::logic_error("gradient span at " + std::to_string(offset) + " is not in the bucket expected next");
    if (--pendingLayers_[nextSpanBucket_] == 0) markReady(nextSpanBucket_++);
}

void GradientSync::allReady() {
    for (size_t b = nextSpanBucket_; b < buckets_.size(); ++b) pendingLayers_[b] = 0;
    nextSpanBucket_ = buckets_.size();
    if (!buckets_.empty()) markReady(buckets_.size() - 1);
}

void GradientSync::commLoop() {
    setThreadName("tb-allreduce");
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        cv_.wait(lock, [&] { return stop_ || (reduced_ < ready_ && !error_); });
        if (stop_) return;
        const Bucket b = buckets_[reduced_];
        lock.unlock();
        const auto t0 = Clock::now();
        std::exception_ptr error;
        try {
            TB_ZONE("comm", "all_reduce");
            collective_.allReduceSum(grads_ + b.offset, static_cast<size_t>(b.count));
        } catch (...) {
            error = std::current_exception();
        }
        const double took = secondsSince(t0);
        lock.lock();
        commSeconds_ += took;
        if (error) error_ = error;
        else ++reduced_;
        cv_.notify_all();
    }
}

double GradientSync::finish(const std::function<void(int64_t, int64_t)>& apply) {
    double waited = 0.0;
    for (size_t k = 0; k < buckets_.size(); ++k) {
        const Bucket& b = buckets_[k];
        if (collective_.size() > 1) {
            TB_PHASE(Communication);
            if (thread_.joinable()) {
                const auto t0 = Clock::now();
                std::unique_lock<std::mutex> lock(mutex_);
                cv_.wait(lock, [&] { return reduced_ > k || error_; });
                if (error_) std::rethrow_exception(error_);
                waited += secondsSince(t0);
            } else {
                const auto t0 = Clock::now();
                collective_.allReduceSum(grads_ + b.offset, static_cast<size_t>(b.count));
                const double took = secondsSince(t0);
                commSeconds_ += took;
                waited += took;
            }
        }
        if (apply) apply(b.offset, b.count);
    }
    return waited;
}

}  // namespace trainbench::engine
