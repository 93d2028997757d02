#pragma once
// A flood of idle connections, as a stranger holding a server's descriptors would open them: real
// loopback sockets that connect and say nothing. And what every server of a job must do about it
// (PendingLimit): the connections over the cap are closed at once and counted, a real peer still
// gets in, and once the flood is gone the places are free again.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "engine/net/pendinglimit.h"
#include "tests/engine/becomestrue.h"
#include "tests/engine/loopbacksocket.h"

namespace trainbench::engine::test {

class IdleFlood {
public:
    IdleFlood(uint16_t port, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            fds_.push_back(connectToLoopback(port));
            closed_.push_back(false);
        }
    }
    ~IdleFlood() { close(); }
    IdleFlood(const IdleFlood&) = delete;
    IdleFlood& operator=(const IdleFlood&) = delete;

    // How many of the connections the server has closed, looking until `count` have or `limit` passed.
    size_t closedByServer(size_t count, std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (closed() < count && std::chrono::steady_clock::now() < end) {
            std::vector<pollfd> p;
            for (int fd : fds_) p.push_back({fd, POLLIN, 0});
            if (::poll(p.data(), p.size(), 20) <= 0) continue;
            for (size_t i = 0; i < p.size(); ++i) {
                if (closed_[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                char buf[4096];
                const ssize_t n = ::recv(fds_[i], buf, sizeof buf, MSG_DONTWAIT);
                if (n <= 0) closed_[i] = true;  // an Error message first is read and passed over
            }
        }
        return closed();
    }

    void close() {
        for (int fd : fds_) ::close(fd);
        fds_.clear();
        closed_.clear();
    }

private:
    size_t closed() const {
        size_t n = 0;
        for (bool c : closed_) n += c;
        return n;
    }
    std::vector<int> fds_;
    std::vector<bool> closed_;
};

// A server's counts, read from the test's thread.
struct ServerCounts {
    std::function<int64_t()> pending, rejected;
};

// Floods the server at `port` with more idle connections than PendingLimit allows, then checks:
// the ones over the cap are closed at once and counted; `realPeer` (which connects, says Hello
// with the job's token and is served, each step with its own deadline) still gets in, taking an
// idle connection's place; once the flood has closed, as many connections as the cap wait for
// their Hello again.
inline void expectIdleFloodIsCapped(uint16_t port, const ServerCounts& server, const std::function<void()>& realPeer) {
    using trainbench::testing::becomesTrue;
    const size_t cap = PendingLimit::kMaxPendingConnections;
    const int64_t rejected = server.rejected();
    {
        IdleFlood flood(port, cap + 10);
        EXPECT_TRUE(becomesTrue([&] { return server.pending() == static_cast<int64_t>(cap); }, std::chrono::seconds(10)))
            << server.pending() << " connections wait for their Hello, at most " << cap;
        EXPECT_EQ(flood.closedByServer(10, std::chrono::seconds(10)), 10u) << "the connections over the cap are closed";
        EXPECT_EQ(server.rejected(), rejected + 10);
        // Time is the point here, not an event to wait for: a flood is told from real peers by
        // its idling (a real peer says Hello as soon as it is connected).
        std::this_thread::sleep_for(PendingLimit::kIdleBeforeEviction);
        const auto start = std::chrono::steady_clock::now();
        realPeer();
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "served promptly";
        EXPECT_EQ(server.rejected(), rejected + 11) << "the longest idle connection made room for the real peer";
        EXPECT_EQ(flood.closedByServer(11, std::chrono::seconds(10)), 11u);
    }
    EXPECT_TRUE(becomesTrue([&] { return server.pending() == 0; }, std::chrono::seconds(10)))
        << server.pending() << " connections still wait after the flood closed";
    IdleFlood again(port, cap);
    EXPECT_TRUE(becomesTrue([&] { return server.pending() == static_cast<int64_t>(cap); }, std::chrono::seconds(10)))
        << "after the flood, " << server.pending() << " of " << cap << " new connections wait for their Hello";
    EXPECT_EQ(server.rejected(), rejected + 11) << "none of them was turned away";
}

}  // namespace trainbench::engine::test
