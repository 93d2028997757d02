// The net scaffold every server of a job is built on (AsioServer, AsioConnection), under a protocol
// of the test's own that neither the rendezvous store nor the parameter servers speak: lines, a
// "HELLO <token>" first, then every line echoed. On loopback, with real sockets: the job's token is
// what admits a peer, the cap on connections waiting for their Hello holds, a peer silent past its
// deadline is cut off, and stop() closes every connection and returns.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/net/asioconnection.h"
#include "tests/engine/becomestrue.h"
#include "tests/engine/idleflood.h"
#include "tests/engine/loopbacksocket.h"

namespace trainbench::engine {
namespace {

using namespace std::chrono_literals;
using trainbench::testing::becomesTrue;
namespace asio = boost::asio;

constexpr const char* kToken = "the-job-token";

// What the server said, from its io thread.
class Reports {
public:
    void add(const std::string& line) {
        std::lock_guard lock(mutex_);
        lines_.push_back(line);
    }
    bool has(const std::string& part) {
        std::lock_guard lock(mutex_);
        for (const std::string& l : lines_)
            if (l.find(part) != std::string::npos) return true;
        return false;
    }

private:
    std::mutex mutex_;
    std::vector<std::string> lines_;
};

// The echo protocol's side of one connection: its reads are lines (at most 256 bytes), a thing no
// server of a job reads.
class EchoConnection : public AsioConnection {
public:
    EchoConnection(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket, Reports& reports,
                   std::chrono::milliseconds silence)
        : AsioConnection(server, std::move(socket), std::move(ticket)), reports_(reports), silence_(silence) {}

    void start() {
        startConnection();
        readLine();
    }

private:
    void readLine() {
        asio::async_read_until(socket(), in_, '\n',
                               [self = self<EchoConnection>()](boost::system::error_code ec, size_t n) {
                                   self->onLine(ec, n);
                               });
    }

    void onLine(boost::system::error_code ec, size_t n) {
        if (closed() || closing()) return;
        if (ec) return close();
        heard();
        const auto buffers = in_.data();  // the iterators point into it
        const auto begin = asio::buffers_begin(buffers);
        const std::string line(begin, begin + static_cast<std::ptrdiff_t>(n) - 1);
        in_.consume(n);
        if (admitted()) {
            send(line + "\n");
        } else {
            if (line.rfind("HELLO ", 0) != 0 || !presentsJobToken(line.substr(6))) return refuse("wrong job token");
            admit(silence_);
            send("WELCOME\n");
        }
        readLine();
    }

    void refuse(const std::string& why) {
        server().countRejected();
        reports_.add("echo server: closed the connection from " + peer() + ": " + why);
        sendThenClose("REFUSED " + why + "\n");
    }

    void onHelloTimeout() override { refuse("no Hello in time"); }
    void onSilent() override {
        reports_.add("echo server: " + peer() + " fell silent");
        sendThenClose("BYE\n");
    }

    Reports& reports_;
    std::chrono::milliseconds silence_;
    asio::streambuf in_{256};
};

struct EchoOptions {
    std::chrono::milliseconds helloTimeout = 10s;
    std::chrono::milliseconds silence = 0ms;  // none
    uint16_t port = 0;
};

class EchoServer {
public:
    explicit EchoServer(EchoOptions o = {})
        : server_(kToken, o.helloTimeout, [this](const std::string& line) { reports.add("echo server: " + line); }) {
        EXPECT_EQ(server_.listen("127.0.0.1", o.port), "");
        server_.start([this, silence = o.silence](AsioServer::Socket socket, PendingLimit::Ticket ticket) {
            std::make_shared<EchoConnection>(server_, std::move(socket), std::move(ticket), reports, silence)->start();
        });
    }
    AsioServer& asio() { return server_; }
    uint16_t port() const { return server_.port(); }

    Reports reports;

private:
    AsioServer server_;
};

// The test's end of a connection: lines out, lines in, each wait with a deadline.
class LineClient {
public:
    explicit LineClient(uint16_t port) : fd_(test::connectToLoopback(port)) {}
    ~LineClient() { ::close(fd_); }
    LineClient(const LineClient&) = delete;
    LineClient& operator=(const LineClient&) = delete;

    void send(const std::string& line) { ::send(fd_, line.data(), line.size(), MSG_NOSIGNAL); }
    // The next line; nothing if the connection closed or `limit` passed first.
    std::optional<std::string> line(std::chrono::milliseconds limit = 10s) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (true) {
            if (const size_t eol = in_.find('\n'); eol != std::string::npos) {
                std::string l = in_.substr(0, eol);
                in_.erase(0, eol + 1);
                return l;
            }
            if (closed_ || std::chrono::steady_clock::now() >= end) return std::nullopt;
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            char buf[512];
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) closed_ = true;
            else in_.append(buf, static_cast<size_t>(n));
        }
    }
    // Whether the server closes the connection within `limit` (the lines before are passed over).
    bool closedWithin(std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (!closed_ && std::chrono::steady_clock::now() < end) line(20ms);
        return closed_;
    }
    bool join(const std::string& token = kToken) {
        send("HELLO " + token + "\n");
        return line() == "WELCOME";
    }

private:
    int fd_;
    std::string in_;
    bool closed_ = false;
};

TEST(AsioServer, APeerWithTheJobTokenIsAdmittedAndServed) {
    EchoServer server;
    LineClient client(server.port());
    ASSERT_TRUE(client.join());
    client.send("ping\n");
    EXPECT_EQ(client.line(), "ping");
    EXPECT_EQ(server.asio().pendingConnections(), 0) << "an admitted peer gives its place back";
    EXPECT_EQ(server.asio().rejectedConnections(), 0);
}

TEST(AsioServer, AWrongTokenIsRefusedNamingThePeer) {
    EchoServer server;
    LineClient client(server.port());
    client.send("HELLO not-the-token\n");
    EXPECT_EQ(client.line(), "REFUSED wrong job token");
    EXPECT_TRUE(client.closedWithin(10s));
    EXPECT_EQ(server.asio().rejectedConnections(), 1);
    EXPECT_TRUE(server.reports.has("echo server: closed the connection from 127.0.0.1:")) << "the peer's address";
    EXPECT_TRUE(becomesTrue([&] { return server.asio().pendingConnections() == 0; }, 10s));
}

TEST(AsioServer, APeerWithoutHelloIsClosedAtTheHelloDeadline) {
    EchoServer server({.helloTimeout = 200ms});
    LineClient client(server.port());
    EXPECT_EQ(client.line(), "REFUSED no Hello in time");
    EXPECT_TRUE(client.closedWithin(10s));
    EXPECT_EQ(server.asio().rejectedConnections(), 1);
}

// More idle connections than PendingLimit allows: the ones over the cap are closed at once and
// counted, a real peer still gets in, and the places are free once the flood is gone.
TEST(AsioServer, AFloodOfIdleConnectionsIsCappedAndRealPeersStillGetIn) {
    EchoServer server;
    test::expectIdleFloodIsCapped(
        server.port(),
        {[&] { return server.asio().pendingConnections(); }, [&] { return server.asio().rejectedConnections(); }},
        [&] {
            LineClient peer(server.port());
            EXPECT_TRUE(peer.join());
        });
}

// An admitted peer heard from less often than its silence deadline is cut off; one that keeps
// talking is not, however long it stays.
TEST(AsioServer, ASilentPeerIsCutOffAtItsDeadline) {
    EchoServer server({.silence = 300ms});
    LineClient talking(server.port()), silent(server.port());
    ASSERT_TRUE(talking.join());
    ASSERT_TRUE(silent.join());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) {  // 1 s: three deadlines
        talking.send("still here\n");
        ASSERT_EQ(talking.line(), "still here") << "a peer that keeps talking was cut off after " << i << " lines";
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(silent.closedWithin(10s));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
    EXPECT_TRUE(server.reports.has(" fell silent"));
}

// stop() with admitted peers, one that has not said Hello and one in the middle of a line: it
// returns, every peer sees its connection close, and nobody is served any more.
TEST(AsioServer, StopClosesEveryConnectionAndReturns) {
    auto server = std::make_unique<EchoServer>();
    const uint16_t port = server->port();
    LineClient a(port), b(port), stranger(port), halfway(port);
    ASSERT_TRUE(a.join());
    ASSERT_TRUE(b.join());
    ASSERT_TRUE(halfway.join());
    halfway.send("no end of line");
    ASSERT_TRUE(becomesTrue([&] { return server->asio().pendingConnections() == 1; }, 10s)) << "the stranger waits";
    auto stopped = std::async(std::launch::async, [&] { server->asio().stop(); });
    ASSERT_EQ(stopped.wait_for(10s), std::future_status::ready) << "stop() still waits after 10 s";
    for (LineClient* c : {&a, &b, &stranger, &halfway}) EXPECT_TRUE(c->closedWithin(10s));
    server->asio().stop();  // twice is fine
    server.reset();
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    EXPECT_NE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << "still listening";
    ::close(fd);
}

TEST(AsioServer, ListeningOnATakenPortSaysWhy) {
    EchoServer first;
    AsioServer second(kToken, 10s, [](const std::string&) {});
    EXPECT_EQ(second.listen("127.0.0.1", first.port()), "Address already in use");
    EXPECT_NE(second.listen("no-such-host.invalid", 0).find("cannot resolve the host"), std::string::npos);
}

// every() ticks on the io thread until its function says stop.
TEST(AsioServer, PeriodicChecksRunUntilTheySayStop) {
    EchoServer server;
    std::atomic<int> ticks{0};
    std::promise<void> done;
    asio::post(server.asio().io(), [&] {
        server.asio().every(10ms, [&] {
            if (++ticks == 3) done.set_value();
            return ticks < 3;
        });
    });
    ASSERT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
    std::this_thread::sleep_for(100ms);  // time is the point: no tick after the third
    EXPECT_EQ(ticks.load(), 3);
}

}  // namespace
}  // namespace trainbench::engine
