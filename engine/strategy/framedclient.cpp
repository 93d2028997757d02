#include "engine/strategy/framedclient.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility> (fixed in 1.75).
#include <utility>

#include <boost/asio.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

std::string millis(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }
}  // namespace

struct FramedClient::Impl {
    asio::io_context io{1};
    tcp::socket socket{io};
    std::string peer;
    framing::FrameDecoder decoder;
    std::deque<framing::Frame> ready;  // decoded, not yet returned
    std::mutex sendMutex;
    std::string broken;  // why the connection is unusable ("" while it is fine)

    explicit Impl(uint64_t maxPayload) : decoder(maxPayload) {}

    [[noreturn]] void fail(const std::string& what) {
        if (broken.empty()) broken = what;
        throw ConnectionError(peer + ": " + what);
    }
};

FramedClient::FramedClient(const std::string& host, int port, std::string peer, std::chrono::milliseconds timeout,
                           uint64_t maxPayload)
    : impl_(std::make_unique<Impl>(maxPayload)) {
    Impl& m = *impl_;
    m.peer = std::move(peer);
    const auto deadline = Clock::now() + timeout;
    tcp::resolver resolver(m.io);
    error_code ec;
    const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
    if (ec) m.fail("cannot resolve host '" + host + "': " + ec.message());
    // The server may not listen yet: retry, more slowly as time goes by.
    auto pause = std::chrono::milliseconds(10);
    std::string last;
    while (true) {
        error_code cec;
        asio::connect(m.socket, endpoints, cec);
        if (!cec) break;
        last = cec.message();
        error_code ignored;
        m.socket.close(ignored);
        const auto now = Clock::now();
        if (now >= deadline)
            m.fail("could not connect within " + millis(timeout) + " (last error: " + last +
                   "); is the task running and is this its address?");
        std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
        pause = std::min(pause * 2, std::chrono::milliseconds(250));
    }
    // Small requests (Pull, Heartbeat) go out at once.
    m.socket.set_option(tcp::no_delay(true), ec);
}

FramedClient::~FramedClient() { close(); }

const std::string& FramedClient::peer() const { return impl_->peer; }

void FramedClient::send(std::string_view frameBytes) {
    Impl& m = *impl_;
    std::lock_guard lock(m.sendMutex);
    const int fd = m.socket.native_handle();
    size_t done = 0;
    while (done < frameBytes.size()) {
        const ssize_t n = ::send(fd, frameBytes.data() + done, frameBytes.size() - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            m.fail(std::string("connection lost while sending: ") + std::strerror(errno));
        }
        done += static_cast<size_t>(n);
    }
}

framing::Frame FramedClient::receive(std::chrono::milliseconds timeout) {
    std::optional<framing::Frame> f = tryReceive(timeout);
    if (!f) impl_->fail("nothing received within " + millis(timeout));
    return std::move(*f);
}

std::optional<framing::Frame> FramedClient::tryReceive(std::chrono::milliseconds timeout) {
    Impl& m = *impl_;
    const auto deadline = Clock::now() + timeout;
    const int fd = m.socket.native_handle();
    std::vector<uint8_t> buf(64 * 1024);
    std::vector<framing::Frame> frames;
    while (m.ready.empty()) {
        if (!m.broken.empty()) throw ConnectionError(m.peer + ": the connection is unusable (" + m.broken + ")");
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
        try {
            m.decoder.feed(buf.data(), static_cast<size_t>(n), frames);
        } catch (const ProtocolError& e) {
            m.broken = e.what();
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
