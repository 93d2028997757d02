#include "engine/net/framedconnection.h"

namespace trainbench::engine {

namespace {
namespace asio = boost::asio;
using boost::system::error_code;

// Reads go into a buffer this large once a peer is admitted, and a small one before: a stranger
// costs no more than its Hello can be.
constexpr size_t kReadBytes = 64 * 1024;
constexpr size_t kHelloReadBytes = 256;
}  // namespace

FramedConnection::FramedConnection(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket,
                                   uint64_t maxHelloPayload)
    : AsioConnection(server, std::move(socket), std::move(ticket)), decoder_(maxHelloPayload),
      buffer_(kHelloReadBytes) {}

void FramedConnection::startReading() {
    startConnection();
    read();
}

void FramedConnection::admitFrames(uint64_t maxPayload, std::chrono::milliseconds silence) {
    admit(silence);
    decoder_.setMaxPayload(maxPayload);
}

void FramedConnection::read() {
    socket().async_read_some(asio::buffer(buffer_), [self = self<FramedConnection>()](error_code ec, size_t n) {
        self->onRead(ec, n);
    });
}

void FramedConnection::onRead(const error_code& ec, size_t n) {
    if (stopped()) return;
    if (ec) return onStreamEnd(ec);
    heard();
    try {
        feed(buffer_.data(), n);
    } catch (const std::exception& e) {  // ProtocolError, or no memory for what a frame asks
        return onBadStream(e);
    }
    if (admitted() && buffer_.size() < kReadBytes) buffer_.resize(kReadBytes);  // between reads: nothing points into it
    if (!stopped()) read();
}

void FramedConnection::feed(const uint8_t* data, size_t n) {
    std::vector<framing::Frame> frames;
    // Until the peer is admitted, one byte at a time, so that the frames after its Hello are read
    // with the larger cap (a client may send them before the answer to its Hello arrives).
    for (; n > 0 && !admitted() && !stopped(); ++data, --n) {
        decoder_.feed(data, 1, frames);
        if (!frames.empty()) onFrame(frames.front());
        frames.clear();
    }
    if (n == 0 || stopped()) return;
    decoder_.feed(data, n, frames);
    for (const framing::Frame& f : frames) {
        if (stopped()) return;
        onFrame(f);
    }
}

}  // namespace trainbench::engine
