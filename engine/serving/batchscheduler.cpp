#include "engine/serving/batchscheduler.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "engine/util/threadname.h"
#include "engine/util/elapsed.h"

namespace trainbench::engine::serving {

namespace {
using Clock = BatchTask::Clock;
}  // namespace

BatchScheduler::BatchScheduler(const Servable& servable, const BatchingParameters& parameters, int64_t instances,
                               OnBatch onBatch)
    : servable_(servable), parameters_(parameters), onBatch_(std::move(onBatch)) {
    for (int64_t i = 0; i < instances; ++i) instances_.push_back(servable_.newInstance());
    for (int64_t i = 0; i < parameters_.num_batch_threads; ++i) threads_.emplace_back([this] { run(); });
}

BatchScheduler::~BatchScheduler() { stop(); }

BatchScheduler::Admission BatchScheduler::schedule(std::unique_ptr<BatchTask>& task) {
    if (task->size > parameters_.max_batch_size) return Admission::TooLarge;
    std::lock_guard lock(mutex_);
    if (stopped_) return Admission::Stopped;
    const Clock::time_point now = Clock::now();
    if (batches_.empty() || !parameters_.enable_batching ||
        batches_.back().size + task->size > parameters_.max_batch_size) {
        if (static_cast<int64_t>(batches_.size()) >= parameters_.max_enqueued_batches) return Admission::QueueFull;
        batches_.emplace_back().opened = now;
    }
    task->enqueued = now;
    batches_.back().size += task->size;
    batches_.back().tasks.push_back(std::move(task));
    ready_.notify_one();
    return Admission::Accepted;
}

// The oldest batch may go when it is full, when a newer one was opened (it could take no more),
// or when its timeout has passed; without batching, at once (it holds one request and takes no more).
bool BatchScheduler::frontReady(Clock::time_point now) const {
    const Batch& front = batches_.front();
    return !parameters_.enable_batching || front.size == parameters_.max_batch_size || batches_.size() > 1 ||
           now >= front.opened + std::chrono::microseconds(parameters_.batch_timeout_micros);
}

void BatchScheduler::run() {
    setThreadName("tb-batch");
    std::vector<float> in, out;  // reused: a thread's buffers grow to the largest batch once
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stopped_) return;
        if (batches_.empty()) {
            ready_.wait(lock);
            continue;
        }
        const Clock::time_point now = Clock::now();
        if (!frontReady(now)) {
            ready_.wait_until(lock, batches_.front().opened + std::chrono::microseconds(parameters_.batch_timeout_micros));
            continue;
        }
        Batch batch = std::move(batches_.front());
        batches_.pop_front();
        lock.unlock();
        process(std::move(batch), now, in, out);
        lock.lock();
    }
}

void BatchScheduler::process(Batch batch, Clock::time_point taken, std::vector<float>& in, std::vector<float>& out) {
    const int64_t exampleSize = servable_.exampleSize();
    const int64_t padded = parameters_.paddedSize(batch.size);
    in.resize(static_cast<size_t>(padded * exampleSize));
    out.resize(static_cast<size_t>(padded * servable_.outputs));
    float* at = in.data();
    for (const auto& task : batch.tasks) at = std::copy(task->input.begin(), task->input.end(), at);
    for (int64_t i = batch.size; i < padded; ++i)  // padding: copies of the first example, as TF Serving pads
        at = std::copy_n(in.data(), exampleSize, at);

    std::unique_ptr<ModelInstance> instance = takeInstance();
    const Clock::time_point computeStart = Clock::now();
    std::string error;
    try {
        instance->predict(in.data(), padded, out.data());
    } catch (const std::exception& e) {
        error = e.what();
    }
    const Clock::time_point computeEnd = Clock::now();
    giveBack(std::move(instance));
    if (onBatch_) onBatch_(batch.size, padded, micros(computeEnd - computeStart));

    const float* from = out.data();
    for (auto& task : batch.tasks) {
        const auto count = static_cast<size_t>(task->size * servable_.outputs);
        if (error.empty()) task->output.assign(from, from + count);
        from += count;
        task->error = error;
        task->queueMicros = micros(taken - task->enqueued);
        task->computeMicros = micros(computeEnd - computeStart);
        task->batchMicros = micros(computeStart - taken) + micros(Clock::now() - computeEnd);
        task->batchExamples = batch.size;
        task->batchPadded = padded;
        auto done = std::move(task->done);
        done(std::move(task));
    }
}

std::unique_ptr<ModelInstance> BatchScheduler::takeInstance() {
    std::unique_lock lock(instancesMutex_);
    instanceFree_.wait(lock, [this] { return !instances_.empty(); });
    std::unique_ptr<ModelInstance> instance = std::move(instances_.back());
    instances_.pop_back();
    return instance;
}

void BatchScheduler::giveBack(std::unique_ptr<ModelInstance> instance) {
    {
        std::lock_guard lock(instancesMutex_);
        instances_.push_back(std::move(instance));
    }
    instanceFree_.notify_one();
}

void BatchScheduler::stop() {
    std::deque<Batch> left;
    {
        std::lock_guard lock(mutex_);
        if (stopped_ && threads_.empty()) return;
        stopped_ = true;
        left.swap(batches_);
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    for (auto& batch : left)
        for (auto& task : batch.tasks) {
            task->error = kStopping;
            auto done = std::move(task->done);
            done(std::move(task));
        }
}

int64_t BatchScheduler::enqueuedBatches() const {
    std::lock_guard lock(mutex_);
    return static_cast<int64_t>(batches_.size());
}

int64_t BatchScheduler::enqueuedTasks() const {
    std::lock_guard lock(mutex_);
    int64_t n = 0;
    for (const auto& b : batches_) n += static_cast<int64_t>(b.tasks.size());
    return n;
}

}  // namespace trainbench::engine::serving
