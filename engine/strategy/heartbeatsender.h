#pragma once
// Tells peers that this task is alive, every `interval`, from a thread of its own: a worker tells the
// coordinator (while it computes a step, pulls, pushes or waits for a task), the coordinator tells
// the parameter servers (between its requests). A peer that hears nothing for the job's timeout
// gives up on the sender. The sends have FramedClient's deadline, so that a stuck data path fails
// rather than hides behind the heartbeats: a send to a peer that stopped reading fails, and the
// thread that shares the connection finds it unusable.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/strategy/framedclient.h"

namespace trainbench::engine {

class HeartbeatSender {
public:
    // Starts sending on `peers` (FramedClient::send is safe to call from two threads). A peer whose
    // connection fails is left alone from then on; the others still hear from this task.
    HeartbeatSender(std::vector<FramedClient*> peers, std::chrono::milliseconds interval);
    // Stops the thread and joins it, within a moment (or a send's deadline).
    ~HeartbeatSender();
    HeartbeatSender(const HeartbeatSender&) = delete;
    HeartbeatSender& operator=(const HeartbeatSender&) = delete;

    int64_t sent() const { return sent_.load(); }

private:
    void run();

    std::vector<FramedClient*> peers_;
    std::chrono::milliseconds interval_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::atomic<int64_t> sent_{0};
    std::thread thread_;  // last: starts once the rest is set up
};

}  // namespace trainbench::engine
