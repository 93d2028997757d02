#pragma once
// TensorFlow Serving's batching parameters (its batching guide, BasicBatchScheduler::Options), under
// the same names, meanings and defaults, so a batching_parameters file's numbers mean here what
// they mean there. pad_variable_length_inputs has no use: every example has the servable's shape.
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::engine::serving {

struct BatchingParameters {
    // TF Serving's --enable_batching. Off: every request is a batch of its own (run at its own size,
    // or padded up to allowed_batch_sizes), taken by the next free batch thread; max_batch_size still
    // bounds a request and max_enqueued_batches the requests waiting. On by default here, unlike TF
    // Serving's server flag (docs/serving.md says why).
    bool enable_batching = true;
    // The largest batch the model is called with; a request of more instances is refused (400).
    int64_t max_batch_size = 1000;
    // How long a batch that is not full may wait for more requests once a batch thread is free to
    // take it, counted from the batch's first request. 0: a free thread takes whatever is there.
    int64_t batch_timeout_micros = 0;
    // Threads that process batches concurrently. 0 here means TF Serving's default, the number of
    // CPU cores (std::thread::hardware_concurrency()); resolved() fills it in.
    int64_t num_batch_threads = 0;
    // Batches' worth of requests accepted and not yet being processed, the open batch included.
    // A request that needs a new batch beyond it is refused at once (503), never kept waiting.
    int64_t max_enqueued_batches = 10;
    // If set, every batch is padded up to the next of these sizes (increasing; the last equals
    // max_batch_size), with copies of its first example whose answers are dropped.
    std::vector<int64_t> allowed_batch_sizes;

    // The largest max_batch_size accepted: bounds what one request may ask the server to allocate.
    static constexpr int64_t kMaxBatchSizeLimit = 65536;
    static constexpr int64_t kMaxBatchTimeoutMicros = 10'000'000;

    // The parameters with num_batch_threads == 0 replaced by the number of cores.
    BatchingParameters resolved() const;
    // "" if usable, else what is wrong, naming the parameter and the range it must be in.
    std::string validate() const;
    // The size a batch of `n` examples is run at: n, or the next allowed size.
    int64_t paddedSize(int64_t n) const;
    // "max_batch_size=1000 batch_timeout_micros=0 ..." for reports.
    std::string describe() const;
};

}  // namespace trainbench::engine::serving
