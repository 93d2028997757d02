#pragma once
// The server's request threads: they decode request bodies and encode answers, so JSON never runs
// on the io thread (one large body would hold up every other connection) nor on a batch thread
// (it would hold up the next batch). close() runs what was posted and joins; after it, post()
// refuses, and the caller does the work itself or answers that the server is stopping.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trainbench::engine::serving {

class WorkPool {
public:
    explicit WorkPool(int64_t threads);
    ~WorkPool();  // close()
    WorkPool(const WorkPool&) = delete;
    WorkPool& operator=(const WorkPool&) = delete;

    // False once closed: `job` was not taken.
    bool post(std::function<void()> job);
    void close();

private:
    void run();
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    bool closed_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace trainbench::engine::serving
