#pragma once
// A parameter server of a parameter_server job (TensorFlow's ParameterServerStrategy): it holds one
// shard of the model's parameters with its optimizer, serves the workers' pulls and applies their
// pushes as they come (asynchronous training), and answers the coordinator's Init, GetState and
// Shutdown (psprotocol.h). It serves on a thread of its own. Only clients that present the job's
// token are served; a connection that breaks the protocol is told why (an Error message), closed
// and reported, and the server keeps serving the others. A coordinator that does not connect in
// time, or falls silent (it sends a Heartbeat when it has nothing else to say), ends the server's
// wait: the job is gone, and a server left waiting for it would be left behind.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/optim/optimizerconfig.h"
#include "engine/net/framing.h"

namespace trainbench::engine {

struct ParameterServerConfig {
    std::string host = "127.0.0.1";  // the address to listen on; loopback unless a cluster spec says otherwise
    uint16_t port = 0;               // 0: any free port (see ParameterServer::port())
    std::string token;               // the job's token; must not be empty
    uint32_t index = 0;              // this server's index in the cluster spec
    OptimizerConfig optimizer;       // updates the shard; its state travels in Init and State
    // Threads that apply an update (its server thread's OpenMP budget, with flush-to-zero as the
    // trainers have). One by default: servers share the machine with the workers, and an idle
    // OpenMP team spins on cores the workers need.
    int threads = 1;
    uint64_t maxPayload = framing::kDefaultMaxPayload;  // larger frames close the connection
    // A connection must say Hello with the token within this long, or it is closed.
    std::chrono::milliseconds helloTimeout{10'000};
    // The coordinator silent this long (strategy.timeout_s) is lost. It sends a Heartbeat at least
    // every quarter of it.
    std::chrono::milliseconds timeout{30'000};
    // How long the coordinator may take to connect: the chief does at its first step, once it has
    // read its data and built its model.
    std::chrono::milliseconds connectTimeout{60'000};
    // Told about every connection closed for a bad token or a protocol error, and every peer that
    // closed its own with an Error message, on the server thread. Default: one line on stderr.
    std::function<void(const std::string&)> report;
};

class ParameterServer {
public:
    // Binds and starts serving. Throws ConnectionError naming host:port if it cannot listen there.
    explicit ParameterServer(ParameterServerConfig config);
    ~ParameterServer();
    ParameterServer(const ParameterServer&) = delete;
    ParameterServer& operator=(const ParameterServer&) = delete;

    uint16_t port() const;
    std::string address() const;  // host:port

    // Blocks until the coordinator sends Shutdown or stop() is called (true), or `stop` becomes
    // true (false: a stop request). Throws ConnectionError if the coordinator's connection closes
    // before Shutdown (the chief is gone, so the job is), was closed for breaking the protocol, or
    // the coordinator did not connect within connectTimeout or fell silent for the timeout.
    bool waitUntilDone(const std::atomic<bool>* stop = nullptr);
    // Closes every connection and joins the thread; connected clients see the connection drop.
    void stop();

    int64_t updatesApplied() const;       // pushes applied to the shard
    int64_t pullsServed() const;          // Params sent, to workers and the coordinator
    // Closed for a bad token, a missing Hello or a protocol error, or turned away because too many
    // waited for their Hello (PendingLimit).
    int64_t rejectedConnections() const;
    int64_t pendingConnections() const;  // connected, no Hello with the token yet

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
