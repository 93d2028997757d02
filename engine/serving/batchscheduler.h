#pragma once
// Dynamic batching as TensorFlow Serving's BasicBatchScheduler does it: requests join the open
// batch until it holds max_batch_size examples (a request that does not fit closes it and opens a
// new one); a batch thread takes the oldest batch once it is closed, or once batch_timeout_micros
// have passed since its first request (at once for 0). At most max_enqueued_batches batches wait,
// the open one included: a request that would need one more is refused at once. Each batch runs on
// one of `instances` model instances (made at construction, each used by one thread at a time).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/serving/batchingparameters.h"
#include "engine/serving/batchtask.h"
#include "engine/serving/servable.h"

namespace trainbench::engine::serving {

class BatchScheduler {
public:
    enum class Admission { Accepted, QueueFull, TooLarge, Stopped };
    // The error of the tasks stop() found still queued.
    static constexpr const char* kStopping = "the server is stopping";
    // After each batch: examples in it, the size it ran at, the model call's time.
    using OnBatch = std::function<void(int64_t examples, int64_t padded, int64_t computeMicros)>;

    // `parameters` must be resolved() and valid; 1 ≤ instances ≤ num_batch_threads. Makes the
    // instances (a factory's exception propagates) and starts the threads.
    BatchScheduler(const Servable& servable, const BatchingParameters& parameters, int64_t instances, OnBatch onBatch);
    ~BatchScheduler();  // stop()
    BatchScheduler(const BatchScheduler&) = delete;
    BatchScheduler& operator=(const BatchScheduler&) = delete;

    // Never blocks. Accepted: the scheduler owns the task (`task` is empty) and calls its done()
    // once. Otherwise `task` is left with the caller.
    Admission schedule(std::unique_ptr<BatchTask>& task);
    // Joins the threads after their current batch; tasks still queued get done() with an error.
    void stop();

    int64_t enqueuedBatches() const;  // the open batch included
    int64_t enqueuedTasks() const;

private:
    struct Batch {
        std::vector<std::unique_ptr<BatchTask>> tasks;
        int64_t size = 0;
        BatchTask::Clock::time_point opened;
    };
    void run();
    bool frontReady(BatchTask::Clock::time_point now) const;
    void process(Batch batch, BatchTask::Clock::time_point taken, std::vector<float>& in, std::vector<float>& out);
    std::unique_ptr<ModelInstance> takeInstance();
    void giveBack(std::unique_ptr<ModelInstance> instance);

    const Servable servable_;
    const BatchingParameters parameters_;
    const OnBatch onBatch_;
    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<Batch> batches_;
    bool stopped_ = false;
    std::mutex instancesMutex_;
    std::condition_variable instanceFree_;
    std::vector<std::unique_ptr<ModelInstance>> instances_;  // those not in use
    std::vector<std::thread> threads_;
};

}  // namespace trainbench::engine::serving
