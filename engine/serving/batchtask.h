#pragma once
// One predict request on its way through the batch scheduler: its examples in, its answers out,
// and where its time went (the X-Trainbench-Timing header; docs/serving.md).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace trainbench::engine::serving {

struct BatchTask {
    using Clock = std::chrono::steady_clock;

    std::vector<float> input;  // size × the servable's exampleSize()
    int64_t size = 0;          // examples (instances) in the request

    // Filled by the scheduler before done() is called.
    std::vector<float> output;  // size × the servable's outputs, unless error is set
    std::string error;          // the model's failure, for a 500
    Clock::time_point enqueued;
    int64_t queueMicros = 0;    // enqueued → its batch taken by a batch thread
    int64_t batchMicros = 0;    // gathering the batch's inputs, padding, waiting for an instance, splitting the outputs
    int64_t computeMicros = 0;  // the model's call for the whole batch
    int64_t batchExamples = 0;  // examples in the batch it ran in
    int64_t batchPadded = 0;    // the size the batch ran at (allowed_batch_sizes)

    // Called once on a batch thread with the task itself; must not block.
    std::function<void(std::unique_ptr<BatchTask>)> done;
};

}  // namespace trainbench::engine::serving
