#include "engine/serving/workpool.h"

#include "engine/util/threadname.h"

namespace trainbench::engine::serving {

WorkPool::WorkPool(int64_t threads) {
    for (int64_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

WorkPool::~WorkPool() { close(); }

bool WorkPool::post(std::function<void()> job) {
    {
        std::lock_guard lock(mutex_);
        if (closed_) return false;
        jobs_.push_back(std::move(job));
    }
    wake_.notify_one();
    return true;
}

void WorkPool::run() {
    setThreadName("tb-request");
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return closed_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // closed, and nothing left
        std::function<void()> job = std::move(jobs_.front());
        jobs_.pop_front();
        lock.unlock();
        job();
        lock.lock();
    }
}

void WorkPool::close() {
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

}  // namespace trainbench::engine::serving
