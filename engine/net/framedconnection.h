#pragma once
// An AsioConnection that reads framing.h's frames (the parameter servers and the coordinator):
// until the peer is admitted, frames are read no larger than a Hello can be, into a small buffer
// and one byte at a time (so that the frames after the Hello are read with the larger cap), and a
// stranger costs no more than its Hello; after admitFrames(), with the protocol's cap. Reading
// stops once the connection closes or is closing (refused: its last words go out, nothing more
// is read). The protocol handles the frames and says what the end of the stream means.
// Included by .cpp files only: Asio stays out of the engine's public headers.
#include <cstdint>
#include <exception>
#include <vector>

#include "engine/net/asioconnection.h"
#include "engine/net/framing.h"

namespace trainbench::engine {

class FramedConnection : public AsioConnection {
protected:
    FramedConnection(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket,
                     uint64_t maxHelloPayload);
    // Starts the connection (startConnection()) and reads.
    void startReading();
    // admit(silence), and frames up to `maxPayload` from now on.
    void admitFrames(uint64_t maxPayload, std::chrono::milliseconds silence = std::chrono::milliseconds(0));
    framing::FrameDecoder& decoder() { return decoder_; }

    virtual void onFrame(const framing::Frame& frame) = 0;
    // The stream ended (end of file) or failed (ec); decoder().finish() says whether inside a frame.
    virtual void onStreamEnd(const boost::system::error_code& ec) = 0;
    // A frame broke the protocol (ProtocolError), or handling one failed (out of memory).
    virtual void onBadStream(const std::exception& e) = 0;

private:
    void read();
    void onRead(const boost::system::error_code& ec, size_t n);
    void feed(const uint8_t* data, size_t n);
    bool stopped() const { return closed() || closing(); }

    framing::FrameDecoder decoder_;
    std::vector<uint8_t> buffer_;
};

}  // namespace trainbench::engine
