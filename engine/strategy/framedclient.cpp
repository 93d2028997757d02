#include "engine/strategy/framedclient.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "engine/net/asioclient.h"
#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

std::string millis(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }

// "a Push message", from a frame's header.
std::string frameName(std::string_view frame) {
    if (frame.size() < framing::kHeaderBytes) return "a frame";
    const auto type = static_cast<uint16_t>(static_cast<uint8_t>(frame[6]) | static_cast<uint8_t>(frame[7]) << 8);
    return "a " + ps::messageName(type) + " message";
}
}  // namespace

struct FramedClient::Impl {
    asio::io_context io{1};
    tcp::socket socket{io};
    std::string peer;
    std::chrono::milliseconds sendTimeout{0};
    framing::FrameDecoder decoder;
    std::deque<framing::Frame> ready;  // decoded, not yet returned
    std::mutex sendMutex;
    std::mutex brokenMutex;  // the heartbeat thread's send may break the connection under a receive
    std::string broken;      // why the connection is unusable ("" while it is fine)

    explicit Impl(uint64_t maxPayload) : decoder(maxPayload) {}

    void setBroken(const std::string& what) {
        std::lock_guard lock(brokenMutex);
        if (broken.empty()) broken = what;
    }
    [[noreturn]] void fail(const std::string& what) {
        setBroken(what);
        throw ConnectionError(peer + ": " + what);
    }
    void throwIfBroken() {
        std::lock_guard lock(brokenMutex);
        if (!broken.empty()) throw ConnectionError(peer + ": the connection is unusable (" + broken + ")");
    }
};

FramedClient::FramedClient(const std::string& host, int port, std::string peer, std::chrono::milliseconds connectTimeout,
                           std::chrono::milliseconds sendTimeout, uint64_t maxPayload)
    : impl_(std::make_unique<Impl>(maxPayload)) {
    Impl& m = *impl_;
    m.peer = std::move(peer);
    m.sendTimeout = sendTimeout;
    // The server may not listen yet: connectWithin() retries.
    if (const std::string why = connectWithin(m.io, m.socket, host, static_cast<uint16_t>(port), connectTimeout,
                                              "is the task running and is this its address?");
        !why.empty())
        m.fail(why);
    error_code ec;
    // Small requests (Pull, Heartbeat) go out at once.
    m.socket.set_option(tcp::no_delay(true), ec);
}

FramedClient::~FramedClient() { close(); }

const std::string& FramedClient::peer() const { return impl_->peer; }

void FramedClient::send(std::string_view frameBytes) {
    Impl& m = *impl_;
    std::lock_guard lock(m.sendMutex);
    m.throwIfBroken();
    const int fd = m.socket.native_handle();
    size_t done = 0;
    // Non-blocking sends, waiting for room with a deadline that each byte taken pushes back: a
    // large frame to a slow peer goes through, a peer that stopped reading fails the send.
    auto deadline = Clock::now() + m.sendTimeout;
    while (done < frameBytes.size()) {
        const ssize_t n = ::send(fd, frameBytes.data() + done, frameBytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            done += static_cast<size_t>(n);
            deadline = Clock::now() + m.sendTimeout;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            m.fail(std::string("connection lost while sending: ") + std::strerror(errno));
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0)
            m.fail("took no bytes for " + millis(m.sendTimeout) + " (" + std::to_string(done) + " of the " +
                   std::to_string(frameBytes.size()) + " bytes of " + frameName(frameBytes) +
                   " sent): it has stopped reading (stopped, hung or cut off)");
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000))) < 0 && errno != EINTR)
            m.fail(std::string("poll failed: ") + std::strerror(errno));
    }
}

framing::Frame FramedClient::receive(std::chrono::milliseconds timeout) {
    std::optional<framing::Frame> f = tryReceive(timeout);
    if (!f) impl_->fail("nothing received for " + millis(timeout));
    return std::move(*f);
}

std::optional<framing::Frame> FramedClient::tryReceive(std::chrono::milliseconds timeout) {
    Impl& m = *impl_;
    auto deadline = Clock::now() + timeout;  // pushed back by every byte that arrives
    const int fd = m.socket.native_handle();
    std::vector<uint8_t> buf(64 * 1024);
    std::vector<framing::Frame> frames;
    while (m.ready.empty()) {
        m.throwIfBroken();
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return std::nullopt;
        pollfd p{fd, POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
        if (r < 0 && errno != EINTR) m.fail(std::string("poll failed: ") + std::strerror(errno));
        if (r <= 0) continue;
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            m.fail(std::string("connection lost: ") + std::strerror(errno));
        }
        if (n == 0) {
            try {
                m.decoder.finish();
            } catch (const ProtocolError& e) {
                m.fail(std::string("connection closed: ") + e.what());
            }
            m.fail("connection closed by the peer");
        }
        deadline = Clock::now() + timeout;
        try {
            m.decoder.feed(buf.data(), static_cast<size_t>(n), frames);
        } catch (const ProtocolError& e) {
            m.setBroken(e.what());
            throw ProtocolError(m.peer + ": " + e.what());
        }
        for (auto& f : frames) m.ready.push_back(std::move(f));
        frames.clear();
    }
    framing::Frame f = std::move(m.ready.front());
    m.ready.pop_front();
    if (f.type == ps::kError) {
        std::string why;
        try {
            why = ps::ErrorMessage::decode(f).message;
        } catch (const ProtocolError& e) {
            why = std::string("(an unreadable Error message: ") + e.what() + ")";
        }
        m.fail("closed the connection: " + why);
    }
    return f;
}

void FramedClient::close() {
    if (!impl_) return;
    error_code ignored;
    impl_->socket.shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace trainbench::engine
