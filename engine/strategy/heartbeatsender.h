#pragma once
// Tells the coordinator that a worker is alive, every `interval`, from a thread of its own: while the
// worker computes a step, pulls, pushes or waits for a task. The coordinator takes a worker that
// falls silent for lost and gives its task to another.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "engine/strategy/framedclient.h"

namespace trainbench::engine {

class HeartbeatSender {
public:
    // Starts sending on `coordinator` (FramedClient::send is safe to call from two threads).
    HeartbeatSender(FramedClient& coordinator, std::chrono::milliseconds interval);
    // Stops the thread and joins it, within a moment.
    ~HeartbeatSender();
    HeartbeatSender(const HeartbeatSender&) = delete;
    HeartbeatSender& operator=(const HeartbeatSender&) = delete;

    int64_t sent() const { return sent_.load(); }

private:
    void run();

    FramedClient& coordinator_;
    std::chrono::milliseconds interval_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::atomic<int64_t> sent_{0};
    std::thread thread_;  // last: starts once the rest is set up
};

}  // namespace trainbench::engine
