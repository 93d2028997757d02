#include "engine/strategy/heartbeatsender.h"

#include <algorithm>

#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

HeartbeatSender::HeartbeatSender(std::vector<FramedClient*> peers, std::chrono::milliseconds interval)
    : peers_(std::move(peers)), interval_(interval), thread_([this] { run(); }) {}

HeartbeatSender::~HeartbeatSender() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void HeartbeatSender::run() {
    const std::string beat = ps::Heartbeat{}.encode();
    std::vector<FramedClient*> live = peers_;
    std::unique_lock lock(mutex_);
    while (!live.empty() && !wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
        lock.unlock();
        std::erase_if(live, [&](FramedClient* peer) {
            try {
                peer->send(beat);
                ++sent_;
                return false;
            } catch (const ConnectionError&) {
                return true;  // gone or stuck: the thread that uses the connection finds out on its next call
            }
        });
        lock.lock();
    }
}

}  // namespace trainbench::engine
