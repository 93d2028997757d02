#pragma once
// The key-value store the ranks of a multi-worker job meet through (Gloo's rendezvous): the chief
// serves it over TCP on a thread of its own, every rank (the chief's too) talks to it through a
// RendezvousClient. Only clients that present the job's token are served; a connection that breaks the
// protocol (rendezvouswire.h) is closed and reported, and the server keeps serving the others.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/rendezvous/rendezvouswire.h"

namespace trainbench::engine {

struct RendezvousServerConfig {
    std::string host = "127.0.0.1";  // the address to listen on; loopback unless a cluster spec says otherwise
    uint16_t port = 0;               // 0: any free port (see RendezvousServer::port())
    std::string token;               // the job's token (RendezvousServer::randomToken()); must not be empty
    uint32_t maxPayloadBytes = rendezvouswire::kDefaultMaxPayload;  // larger messages close the connection
    // A connection must present the token within this long, or it is closed.
    std::chrono::milliseconds helloTimeout{10'000};
    // Told about every connection closed for a bad token or a protocol error, on the server thread.
    // Default: one line on stderr.
    std::function<void(const std::string&)> report;
};

class RendezvousServer {
public:
    // Binds and starts serving on its own thread. Throws RendezvousError naming host:port if it
    // cannot listen there.
    explicit RendezvousServer(RendezvousServerConfig config);
    ~RendezvousServer();
    RendezvousServer(const RendezvousServer&) = delete;
    RendezvousServer& operator=(const RendezvousServer&) = delete;

    // Closes every connection and joins the thread; waiting clients see the connection drop.
    void stop();
    uint16_t port() const;
    std::string address() const;  // host:port, as a RendezvousClient takes it
    // Connections closed for a bad token, a missing Hello or a protocol error, or turned away
    // because too many waited for their Hello (PendingLimit).
    int64_t rejectedConnections() const;
    int64_t pendingConnections() const;  // connected, no Hello with the token yet

    // 128 random bits from the OS as 32 hex digits: a fresh token per job.
    static std::string randomToken();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
