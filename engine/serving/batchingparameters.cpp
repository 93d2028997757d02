#include "engine/serving/batchingparameters.h"

#include <algorithm>
#include <thread>

namespace trainbench::engine::serving {

BatchingParameters BatchingParameters::resolved() const {
    BatchingParameters p = *this;
    if (p.num_batch_threads == 0) p.num_batch_threads = std::max(1u, std::thread::hardware_concurrency());
    return p;
}

std::string BatchingParameters::validate() const {
    const auto range = [](const char* name, int64_t value, int64_t lo, int64_t hi) -> std::string {
        if (value >= lo && value <= hi) return {};
        return std::string(name) + " is " + std::to_string(value) + ", expected " + std::to_string(lo) + " to " +
               std::to_string(hi);
    };
    std::string e = range("max_batch_size", max_batch_size, 1, kMaxBatchSizeLimit);
    if (e.empty()) e = range("batch_timeout_micros", batch_timeout_micros, 0, kMaxBatchTimeoutMicros);
    if (e.empty()) e = range("num_batch_threads", num_batch_threads, 0, 1024);
    if (e.empty()) e = range("max_enqueued_batches", max_enqueued_batches, 1, 1'000'000);
    if (!e.empty() || allowed_batch_sizes.empty()) return e;
    for (size_t i = 0; i < allowed_batch_sizes.size(); ++i) {
        const int64_t s = allowed_batch_sizes[i];
        const int64_t previous = i == 0 ? 0 : allowed_batch_sizes[i - 1];
        if (s <= previous)
            return "allowed_batch_sizes[" + std::to_string(i) + "] is " + std::to_string(s) +
                   ", expected more than " + std::to_string(previous) + " (the sizes must increase)";
    }
    if (allowed_batch_sizes.back() != max_batch_size)
        return "allowed_batch_sizes ends with " + std::to_string(allowed_batch_sizes.back()) +
               ", expected max_batch_size (" + std::to_string(max_batch_size) + ")";
    return {};
}

int64_t BatchingParameters::paddedSize(int64_t n) const {
    const auto it = std::lower_bound(allowed_batch_sizes.begin(), allowed_batch_sizes.end(), n);
    return it == allowed_batch_sizes.end() ? n : *it;
}

std::string BatchingParameters::describe() const {
    std::string sizes;
    for (int64_t s : allowed_batch_sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
    return std::string("enable_batching=") + (enable_batching ? "true" : "false") +
           " max_batch_size=" + std::to_string(max_batch_size) +
           " batch_timeout_micros=" + std::to_string(batch_timeout_micros) +
           " num_batch_threads=" + std::to_string(num_batch_threads) +
           " max_enqueued_batches=" + std::to_string(max_enqueued_batches) + " allowed_batch_sizes=[" + sizes + "]";
}

}  // namespace trainbench::engine::serving
