#pragma once
// A worker's connections to the parameter servers of its job, one per server, each greeted with
// Hello. A pull or a push goes to every server at once (all requests out before the first reply is
// read), so that a step waits for the slowest server rather than for the sum of them.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/strategy/clusterspec.h"
#include "engine/strategy/framedclient.h"
#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

// A parameter server that failed under a worker: its connection broke, it fell silent for the
// timeout, or it broke the protocol. The message names the server and its address.
class ParameterServerLost : public ConnectionError {
public:
    ParameterServerLost(uint32_t index, std::string where, const std::string& message)
        : ConnectionError(message), server(index), address(std::move(where)) {}
    uint32_t server;
    std::string address;
};

class ShardConnections {
public:
    // Connects to servers[k] (which holds shards[k]) as worker `worker`, retrying for `connectTimeout`
    // while a server is not listening yet. A server that sends nothing, or takes none of a request's
    // bytes, for `timeout` in a pull or push is lost.
    // Throws ParameterServerLost for the first server that cannot be reached or greeted.
    ShardConnections(const std::vector<HostPort>& servers, const std::vector<std::vector<ps::Span>>& shards,
                     const std::string& token, uint32_t worker, std::chrono::milliseconds connectTimeout,
                     std::chrono::milliseconds timeout);

    size_t size() const { return servers_.size(); }

    // The current values of every shard, into `params` (the flat buffer), for step `step`.
    void pull(int64_t step, float* params);
    // Every shard's part of `grads`, computed on the values pull() got; returns each server's staleness.
    std::vector<uint64_t> push(int64_t step, const float* grads);

private:
    struct Server {
        uint32_t index = 0;
        std::string address;
        std::vector<ps::Span> shard;
        std::unique_ptr<FramedClient> client;
        ps::Push push;  // its gradient buffer is reused from step to step
        uint64_t pulledVersion = 0;
    };
    // Runs fn on server k's connection; what breaks there becomes ParameterServerLost.
    template <class Fn>
    void onServer(Server& s, const Fn& fn);

    std::vector<Server> servers_;
    std::chrono::milliseconds timeout_;
};

}  // namespace trainbench::engine
