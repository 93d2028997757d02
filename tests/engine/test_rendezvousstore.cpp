// The rendezvous store of multi_worker jobs: its wire format, the server (token check, caps,
// malformed messages closing only their own connection, a flood of idle connections capped) and
// the client Gloo uses (set, get, wait, timeouts that name the keys and the store's host:port).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/net/hostport.h"
#include "engine/rendezvous/rendezvousclient.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/rendezvous/rendezvouswire.h"
#include "engine/util/errors.h"
#include "idleflood.h"

namespace trainbench::engine {
namespace {

using namespace rendezvouswire;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string header(uint32_t magic, uint16_t version, uint16_t type, uint32_t length) {
    PayloadWriter w;
    w.u32(magic).bytes(&version, 2).bytes(&type, 2).u32(length);  // little-endian host, as the wire
    return w.data();
}

std::string hello(const std::string& token) { return frame(MessageType::Hello, PayloadWriter().str(token).data()); }

// The RendezvousError message of fn(), or a failure if it does not throw one.
template <class Fn>
std::string rendezvousErrorOf(Fn fn) {
    try {
        fn();
    } catch (const RendezvousError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a RendezvousError";
    return {};
}

// A raw TCP connection to the store, to send what RendezvousClient never would.
class RawConnection {
public:
    explicit RawConnection(uint16_t port) {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    }
    ~RawConnection() { close(fd_); }
    bool connected() const { return connected_; }
    void send(const std::string& bytes) { ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
    void finishSending() { shutdown(fd_, SHUT_WR); }
    // What the server sent until it closed the connection; `closed` false if it did not within `limit`.
    struct Received {
        std::string bytes;
        bool closed = false;
    };
    Received readUntilClosed(std::chrono::milliseconds limit) {
        Received r;
        const auto end = Clock::now() + limit;
        char buf[4096];
        while (Clock::now() < end) {
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 20) <= 0) continue;
            const ssize_t n = recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) {
                r.closed = true;
                break;
            }
            r.bytes.append(buf, static_cast<size_t>(n));
        }
        return r;
    }

private:
    int fd_ = -1;
    bool connected_ = false;
};

// The message of the last Error frame in `bytes` ("" if there is none).
std::string errorMessageIn(const std::string& bytes) {
    size_t at = 0;
    std::string message;
    while (bytes.size() - at >= kHeaderBytes) {
        Header h;
        if (!checkHeader(reinterpret_cast<const uint8_t*>(bytes.data() + at), 1u << 20, &h).empty()) break;
        if (bytes.size() - at - kHeaderBytes < h.length) break;
        PayloadReader in(reinterpret_cast<const uint8_t*>(bytes.data() + at + kHeaderBytes), h.length);
        if (h.type == static_cast<uint16_t>(MessageType::Error)) in.str(&message, 1u << 20);
        at += kHeaderBytes + h.length;
    }
    return message;
}

TEST(StoreWire, HeadersAreCheckedForMagicVersionAndCap) {
    uint8_t h[kHeaderBytes];
    encodeHeader(h, MessageType::Set, 5);
    Header parsed;
    EXPECT_EQ(checkHeader(h, 5, &parsed), "");
    EXPECT_EQ(parsed.type, static_cast<uint16_t>(MessageType::Set));
    EXPECT_EQ(parsed.length, 5u);
    EXPECT_NE(checkHeader(h, 4, &parsed).find("Set message of 5 bytes exceeds the cap of 4"), std::string::npos);
    const std::string foreign = header(kMagic, 2, 2, 0);
    EXPECT_NE(checkHeader(reinterpret_cast<const uint8_t*>(foreign.data()), 16, &parsed).find("protocol version 2"),
              std::string::npos);
    const std::string http = "GET / HTTP/1.1\r\n";
    EXPECT_NE(checkHeader(reinterpret_cast<const uint8_t*>(http.data()), 16, &parsed).find("bad magic"),
              std::string::npos);
}

TEST(StoreWire, PayloadReaderNeverReadsPastTheEnd) {
    const std::string p = PayloadWriter().u32(100).bytes("abc", 3).data();  // says 100 bytes, has 3
    PayloadReader in(reinterpret_cast<const uint8_t*>(p.data()), p.size());
    std::string s;
    EXPECT_FALSE(in.str(&s, 1000));
    const std::string q = PayloadWriter().str("key").data();
    PayloadReader capped(reinterpret_cast<const uint8_t*>(q.data()), q.size());
    EXPECT_FALSE(capped.str(&s, 2));  // longer than the cap
    PayloadReader ok(reinterpret_cast<const uint8_t*>(q.data()), q.size());
    EXPECT_TRUE(ok.str(&s, 3));
    EXPECT_EQ(s, "key");
    EXPECT_TRUE(ok.atEnd());
}

TEST(StoreWire, HostPort) {
    EXPECT_EQ(net::parseHostPort("127.0.0.1:29500").host, "127.0.0.1");
    EXPECT_EQ(net::parseHostPort("127.0.0.1:29500").port, 29500);
    EXPECT_EQ(net::parseHostPort("[::1]:80").host, "::1");
    EXPECT_EQ(net::formatHostPort("::1", 80), "[::1]:80");
    for (const char* bad : {"localhost", ":80", "host:0", "host:65536", "host:12x", "host:"})
        EXPECT_NE(rendezvousErrorOf([&] { net::parseHostPort(bad); }).find(std::string("'") + bad + "'"), std::string::npos)
            << bad;
}

class RendezvousStoreTest : public ::testing::Test {
protected:
    void SetUp() override { start(RendezvousServerConfig{}); }
    void start(RendezvousServerConfig config) {
        server_.reset();
        config.token = token_;
        config.report = [this](const std::string& line) {
            std::lock_guard lock(mutex_);
            reports_.push_back(line);
        };
        server_ = std::make_unique<RendezvousServer>(config);
    }
    std::vector<std::string> reports() {
        std::lock_guard lock(mutex_);
        return reports_;
    }
    RendezvousClient client(std::chrono::milliseconds timeout = 5s) {
        return RendezvousClient(server_->address(), token_, timeout);
    }

    std::string token_ = RendezvousServer::randomToken();
    std::unique_ptr<RendezvousServer> server_;
    std::mutex mutex_;
    std::vector<std::string> reports_;
};

TEST_F(RendezvousStoreTest, ListensOnLoopbackWithARandomToken) {
    EXPECT_EQ(server_->address(), "127.0.0.1:" + std::to_string(server_->port()));
    EXPECT_EQ(token_.size(), 32u);
    EXPECT_NE(token_, RendezvousServer::randomToken());
}

TEST_F(RendezvousStoreTest, SetGetAndWaitAcrossClients) {
    RendezvousClient a = client(), b = client();
    const std::vector<char> value{'a', '\0', 'b', '\xff'};
    std::thread setter([&] {
        std::this_thread::sleep_for(100ms);
        b.set("rank_1", value);
        b.set("empty", {});
    });
    const auto t0 = Clock::now();
    a.wait({"rank_1", "empty"});  // blocks until both are there
    setter.join();
    EXPECT_GE(Clock::now() - t0, 90ms);
    EXPECT_EQ(a.get("rank_1"), value);
    EXPECT_TRUE(a.get("empty").empty());
    a.set("rank_1", {'x'});  // overwrites
    EXPECT_EQ(b.get("rank_1"), std::vector<char>{'x'});
    EXPECT_TRUE(reports().empty());
}

TEST_F(RendezvousStoreTest, TimeoutsNameTheMissingKeysAndTheAddress) {
    RendezvousClient c = client(300ms);
    c.set("there", {'1'});
    const std::string waited = rendezvousErrorOf([&] { c.wait({"there", "rank_3"}, 200ms); });
    EXPECT_NE(waited.find(server_->address()), std::string::npos) << waited;
    EXPECT_NE(waited.find("timed out after 200 ms waiting for key(s) 'rank_3'"), std::string::npos) << waited;
    EXPECT_EQ(waited.find("'there'"), std::string::npos) << waited;
    const std::string got = rendezvousErrorOf([&] { c.get("rank_7"); });  // get waits, then gives up
    EXPECT_NE(got.find("'rank_7'"), std::string::npos) << got;
    EXPECT_NE(got.find(server_->address()), std::string::npos) << got;
    EXPECT_EQ(c.get("there"), std::vector<char>{'1'});  // a timeout leaves the connection usable
}

TEST_F(RendezvousStoreTest, WrongTokenIsRefusedAndItsClientCannotJoin) {
    const std::string e = rendezvousErrorOf([&] { RendezvousClient(server_->address(), "not-this-job", 2s); });
    EXPECT_NE(e.find(server_->address()), std::string::npos) << e;
    EXPECT_NE(e.find("wrong job token"), std::string::npos) << e;
    // A stray client that does not wait for the answer: its Set never lands.
    RawConnection stray(server_->port());
    ASSERT_TRUE(stray.connected());
    stray.send(hello("not-this-job") + frame(MessageType::Set, PayloadWriter().str("rank_0").bytes("evil", 4).data()));
    const auto r = stray.readUntilClosed(3s);
    EXPECT_TRUE(r.closed);
    EXPECT_NE(errorMessageIn(r.bytes).find("wrong job token"), std::string::npos);
    RendezvousClient good = client();
    EXPECT_NE(rendezvousErrorOf([&] { good.wait({"rank_0"}, 100ms); }).find("timed out"), std::string::npos);
    EXPECT_EQ(server_->rejectedConnections(), 2);
    const auto lines = reports();
    ASSERT_EQ(lines.size(), 2u);
    for (const auto& line : lines) EXPECT_NE(line.find("wrong job token"), std::string::npos) << line;
    EXPECT_EQ(lines[0].find(token_), std::string::npos) << "reports must not leak the token";
}

TEST_F(RendezvousStoreTest, MalformedOrOversizedMessagesCloseOnlyTheirConnection) {
    RendezvousClient before = client();
    before.set("k", {'v'});
    const std::string set = frame(MessageType::Set, PayloadWriter().str("a").data());
    struct Case {
        const char* name;
        std::string bytes;
        bool halfClose;          // stop sending after the bytes (a truncated message)
        const char* reply;       // expected in the Error reply ("" = closed without a reply)
        const char* report;      // expected in the server's report
    };
    const std::vector<Case> cases = {
        {"not our protocol", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", false, "", "bad magic"},
        {"oversized", hello(token_) + header(kMagic, kVersion, 2, kDefaultMaxPayload + 1), false,
         "Set message of 1048577 bytes exceeds the cap of 1048576", "exceeds the cap"},
        {"oversized from a stranger", header(kMagic, kVersion, 4, kDefaultMaxPayload + 1), false, "exceeds the cap",
         "exceeds the cap"},
        {"Hello too big for a token", header(kMagic, kVersion, 1, 5000), false, "Hello of 5000 bytes",
         "Hello of 5000 bytes"},
        {"future version", header(kMagic, 9, 1, 0), false, "protocol version 9", "protocol version 9"},
        {"request before Hello", set, false, "Set before Hello", "Set before Hello"},
        {"reply type from a client", hello(token_) + frame(MessageType::Ok, ""), false, "unexpected message type 16",
         "unexpected message type 16"},
        {"unknown type", hello(token_) + header(kMagic, kVersion, 77, 0), false, "unexpected message type 77",
         "unexpected message type 77"},
        {"Wait promising a million keys",
         hello(token_) + frame(MessageType::Wait, PayloadWriter().u32(10).u32(1000000).data()), false,
         "malformed Wait payload", "malformed Wait payload"},
        {"key longer than its message",
         hello(token_) + frame(MessageType::Set, PayloadWriter().u32(100).bytes("ab", 2).data()), false,
         "malformed Set payload", "malformed Set payload"},
        {"Get with trailing bytes", hello(token_) + frame(MessageType::Get, PayloadWriter().str("k").u32(0).data()),
         false, "malformed Get payload", "malformed Get payload"},
        {"truncated header", hello(token_) + set.substr(0, 5), true, "", "inside a message header (5 of 12 bytes)"},
        {"truncated payload", hello(token_) + set.substr(0, set.size() - 1), true, "", "inside a Set message (4 of 5"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        RawConnection raw(server_->port());
        ASSERT_TRUE(raw.connected());
        raw.send(c.bytes);
        if (c.halfClose) raw.finishSending();
        const auto r = raw.readUntilClosed(3s);
        EXPECT_TRUE(r.closed);
        if (*c.reply) {
            EXPECT_NE(errorMessageIn(r.bytes).find(c.reply), std::string::npos) << errorMessageIn(r.bytes);
        } else {
            EXPECT_EQ(errorMessageIn(r.bytes), "");
        }
        const auto lines = reports();
        ASSERT_FALSE(lines.empty());
        EXPECT_NE(lines.back().find(c.report), std::string::npos) << lines.back();
        EXPECT_NE(lines.back().find("closed the connection from 127.0.0.1:"), std::string::npos) << lines.back();
    }
    EXPECT_EQ(server_->rejectedConnections(), static_cast<int64_t>(cases.size()));
    // Everyone else is still served: a connection made before, and a new one.
    EXPECT_EQ(before.get("k"), std::vector<char>{'v'});
    RendezvousClient after = client();
    after.set("k2", {'w'});
    EXPECT_EQ(before.get("k2"), std::vector<char>{'w'});
}

TEST_F(RendezvousStoreTest, AConnectionThatNeverSaysHelloIsClosed) {
    RendezvousServerConfig config;
    config.helloTimeout = 200ms;
    start(config);
    RawConnection silent(server_->port());
    ASSERT_TRUE(silent.connected());
    const auto r = silent.readUntilClosed(5s);
    EXPECT_TRUE(r.closed);
    ASSERT_EQ(reports().size(), 1u);
    EXPECT_NE(reports()[0].find("no Hello with the job token within 200 ms"), std::string::npos) << reports()[0];
    RendezvousClient c = client();  // and the next one is served
    c.set("k", {});
}

// More idle connections than PendingLimit allows: the ones over the cap are closed at once and
// counted, a rank still joins and sets a key, and the places are free once the flood is gone.
TEST_F(RendezvousStoreTest, AFloodOfIdleConnectionsIsCappedAndRealPeersStillGetIn) {
    test::expectIdleFloodIsCapped(
        server_->port(), {[&] { return server_->pendingConnections(); }, [&] { return server_->rejectedConnections(); }},
        [&] {
            RendezvousClient c = client();
            c.set("rank0", {'x'});
            EXPECT_EQ(c.get("rank0"), std::vector<char>{'x'});
        });
}

TEST_F(RendezvousStoreTest, StoppingTheServerWakesAWaitingClient) {
    RendezvousClient c = client(30s);
    std::thread stopper([&] {
        std::this_thread::sleep_for(100ms);
        server_->stop();
    });
    const auto t0 = Clock::now();
    const std::string e = rendezvousErrorOf([&] { c.wait({"never"}); });
    stopper.join();
    EXPECT_LT(Clock::now() - t0, 10s);
    EXPECT_NE(e.find("connection lost during Wait for key(s) 'never'"), std::string::npos) << e;
}

TEST(RendezvousClient, AnUnreachableStoreTimesOutNamingItsAddress) {
    uint16_t port = 0;
    {
        RendezvousServerConfig config;
        config.token = "t";
        port = RendezvousServer(config).port();  // a port nothing listens on any more
    }
    const auto t0 = Clock::now();
    const std::string e = rendezvousErrorOf([&] { RendezvousClient("127.0.0.1:" + std::to_string(port), "t", 300ms); });
    EXPECT_LT(Clock::now() - t0, 5s);
    EXPECT_NE(e.find("rendezvous store 127.0.0.1:" + std::to_string(port) + ": could not connect within 300 ms"),
              std::string::npos)
        << e;
}

TEST(RendezvousServer, RefusesAnEmptyTokenAndABusyPort) {
    EXPECT_THROW(RendezvousServer(RendezvousServerConfig{}), std::invalid_argument);
    RendezvousServerConfig config;
    config.token = "t";
    RendezvousServer first(config);
    config.port = first.port();
    try {
        RendezvousServer second(config);
        ADD_FAILURE() << "a second server on the same port";
    } catch (const RendezvousError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot listen on " + first.address()), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace trainbench::engine
