#include "engine/strategy/heartbeatsender.h"

#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

HeartbeatSender::HeartbeatSender(FramedClient& coordinator, std::chrono::milliseconds interval)
    : coordinator_(coordinator), interval_(interval), thread_([this] { run(); }) {}

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
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
        lock.unlock();
        try {
            coordinator_.send(beat);
            ++sent_;
        } catch (const ConnectionError&) {
            return;  // the coordinator is gone: the worker's thread finds out on its next receive
        }
        lock.lock();
    }
}

}  // namespace trainbench::engine
