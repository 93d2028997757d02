#pragma once
// Shared by the parameter-server tests: a plain loopback socket that speaks frames (to send what
// our own clients never would, and to play the coordinator for a worker), a listener, a small
// model, test data and the message of the error a call throws.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/modelspec.h"
#include "engine/net/framing.h"
#include "engine/util/errors.h"
#include "engine/util/rng.h"
#include "tests/engine/loopbacksocket.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine::test {

inline constexpr const char* kJobToken = "0123456789abcdef0123456789abcdef";

// A TCP connection as a bare file descriptor, read through a FrameDecoder.
class FrameSocket {
public:
    explicit FrameSocket(int fd = -1) : fd_(fd) {}
    FrameSocket(FrameSocket&& o) noexcept : fd_(o.fd_), decoder_(std::move(o.decoder_)), ready_(std::move(o.ready_)), closed_(o.closed_) { o.fd_ = -1; }
    FrameSocket& operator=(FrameSocket&&) = delete;
    ~FrameSocket() { close(); }

    static FrameSocket connectTo(uint16_t port) { return FrameSocket(connectToLoopback(port)); }

    void send(const std::string& bytes) {
        size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
            if (n <= 0) return;  // the peer closed: what it sent before is still readable
            done += static_cast<size_t>(n);
        }
    }

    // The next frame; nothing if the peer closed the connection (closed() is then true) or `limit`
    // passed first.
    std::optional<framing::Frame> receive(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
        const auto end = std::chrono::steady_clock::now() + limit;
        std::vector<framing::Frame> frames;
        uint8_t buf[65536];
        while (ready_.empty() && !closed_ && std::chrono::steady_clock::now() < end) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) {
                closed_ = true;
                break;
            }
            decoder_.feed(buf, static_cast<size_t>(n), frames);
            for (auto& f : frames) ready_.push_back(std::move(f));
            frames.clear();
        }
        if (ready_.empty()) return std::nullopt;
        framing::Frame f = std::move(ready_.front());
        ready_.pop_front();
        return f;
    }
    bool closed() const { return closed_; }

    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_;
    framing::FrameDecoder decoder_;
    std::deque<framing::Frame> ready_;
    bool closed_ = false;
};

// A listening socket on a free loopback port. `receiveBuffer` (bytes, 0: the kernel's default) is
// the accepted connections' receive buffer: a small one makes a peer that does not read fill up fast.
// `backlog`: how many connections may wait to be accepted.
class Listener {
public:
    explicit Listener(int receiveBuffer = 0, int backlog = 8) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (receiveBuffer > 0) {
            EXPECT_EQ(::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, sizeof receiveBuffer), 0);
        }
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = 0;
        ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(::listen(fd_, backlog), 0);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
    }
    ~Listener() { ::close(fd_); }
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;

    uint16_t port() const { return port_; }
    int fd() const { return fd_; }
    // The next connection; an invalid one (no fd) if none came within `limit`.
    FrameSocket accept(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(limit.count())) <= 0) {
            ADD_FAILURE() << "nobody connected within " << limit.count() << " ms";
            return FrameSocket();
        }
        return FrameSocket(::accept(fd_, nullptr, nullptr));
    }

private:
    int fd_;
    uint16_t port_ = 0;
};

// Flatten, a dense layer of `hidden` units, ReLU and a dense layer of `classes`: on 1x2x2 examples,
// 5 x hidden + (hidden + 1) x classes parameters.
inline ModelSpec denseModel(int hidden, int classes) {
    LayerSpec flatten, dense, relu, out;
    flatten.kind = LayerKind::Flatten;
    dense.units = hidden;
    relu.kind = LayerKind::ReLU;
    out.units = classes;
    return ModelSpec{"", {flatten, dense, relu, out}, {}, {}, {}};
}

// n values in ±[0.1, 1): no zeros or tiny values, whose squares (Adam's v) would be denormal and
// flushed on one thread but not another.
inline std::vector<float> testValues(size_t n, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (float& x : v) x = (rng.below(2) ? 1.0f : -1.0f) * rng.uniform(0.1f, 1.0f);
    return v;
}

// Bit for bit: the same floats computed the same way.
inline void expectSameBits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
            ADD_FAILURE() << what << ": value " << i << " is " << got[i] << ", expected " << want[i];
            return;
        }
}

}  // namespace trainbench::engine::test
