#pragma once
// A blocking client connection that speaks framing.h's frames: what workers use towards the
// coordinator and the parameter servers, and the coordinator towards the parameter servers.
// send() may be called from several threads (a heartbeat thread and the main one); receive() from
// one thread at a time.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/strategy/framing.h"

namespace trainbench::engine {

class FramedClient {
public:
    // Connects to host:port, retrying refused connections until `timeout` (the server may still be
    // starting). `peer` names the other side in every error ("parameter server 1 at 127.0.0.1:4001").
    // Throws ConnectionError when it cannot connect in time.
    FramedClient(const std::string& host, int port, std::string peer, std::chrono::milliseconds timeout,
                 uint64_t maxPayload = framing::kDefaultMaxPayload);
    ~FramedClient();
    FramedClient(const FramedClient&) = delete;
    FramedClient& operator=(const FramedClient&) = delete;

    // Writes one whole frame (framing::encode's bytes). Throws ConnectionError naming the peer if
    // the connection is closed or reset.
    void send(std::string_view frameBytes);
    // The next frame. Throws ConnectionError when the peer closes the connection or nothing arrives
    // within `timeout`, ProtocolError (naming the byte offset) for a malformed frame, and
    // ConnectionError with the peer's message when the frame is an Error message (psprotocol.h).
    framing::Frame receive(std::chrono::milliseconds timeout);
    // As receive(), but returns nothing when no frame arrived within `timeout`, and the connection
    // stays usable (receive() gives up on a peer that fell silent; this waits for a peer that may
    // take its time, as a worker waits for its next task).
    std::optional<framing::Frame> tryReceive(std::chrono::milliseconds timeout);
    // Shuts the connection down; a receive() blocked in another thread returns with an error.
    void close();
    const std::string& peer() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
