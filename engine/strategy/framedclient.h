#pragma once
// A blocking client connection that speaks framing.h's frames: what workers use towards the
// coordinator and the parameter servers, and the coordinator towards the parameter servers.
// send() may be called from several threads (a heartbeat thread and the main one); receive() from
// one thread at a time. Every wait has a deadline: a peer that stops reading (stopped, hung, cut
// off) fails a send, one that stops writing fails a receive, after the timeout without progress.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/net/framing.h"

namespace trainbench::engine {

class FramedClient {
public:
    // Connects to host:port, retrying refused connections until `connectTimeout` (the server may
    // still be starting). `peer` names the other side in every error ("parameter server 1 at
    // 127.0.0.1:4001"). A send fails when the peer takes none of its bytes for `sendTimeout`.
    // Throws ConnectionError when it cannot connect in time.
    FramedClient(const std::string& host, int port, std::string peer, std::chrono::milliseconds connectTimeout,
                 std::chrono::milliseconds sendTimeout, uint64_t maxPayload = framing::kDefaultMaxPayload);
    ~FramedClient();
    FramedClient(const FramedClient&) = delete;
    FramedClient& operator=(const FramedClient&) = delete;

    // Writes one whole frame (framing::encode's bytes). Throws ConnectionError naming the peer if
    // the connection is closed or reset, or the peer took no byte for the send timeout (the
    // connection is unusable then: part of the frame may have gone out).
    void send(std::string_view frameBytes);
    // The next frame. Throws ConnectionError when the peer closes the connection or sends nothing
    // for `timeout` (a frame still arriving is waited for as long as its bytes come),
    // ProtocolError (naming the byte offset) for a malformed frame, and ConnectionError with the
    // peer's message when the frame is an Error message (psprotocol.h).
    framing::Frame receive(std::chrono::milliseconds timeout);
    // As receive(), but returns nothing when the peer sent nothing for `timeout`, and the
    // connection stays usable.
    std::optional<framing::Frame> tryReceive(std::chrono::milliseconds timeout);
    // Shuts the connection down; a receive() blocked in another thread returns with an error.
    void close();
    const std::string& peer() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
