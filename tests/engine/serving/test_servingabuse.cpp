// What clients can do wrong or on purpose, and that none of it stops the server for others: the
// bad-request corpus (each gets its 4xx and message, and a good request right after succeeds),
// a header trickled byte by byte (closed at the header deadline), thousands of idle connections,
// and connections beyond max_connections.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/engine/becomestrue.h"
#include "tests/engine/idleflood.h"
#include "tests/engine/serving/servingfixture.h"

namespace trainbench::engine::serving {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using trainbench::testing::becomesTrue;
using test::HttpClient;

const std::string kGood = R"({"instances": [[1,2,3,4]]})";

void expectGoodRequestServed(uint16_t port, const std::string& after) {
    const auto start = std::chrono::steady_clock::now();
    test::expectPredictions(HttpClient(port).request("POST", "/v1/models/dense:predict", kGood), {1, 2, 3, 4});
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "a good request after " << after << " was slow";
}

struct Case {
    std::string name, method = "POST", target = "/v1/models/dense:predict", raw, body, message;
    int status = 0;
};

Case readCase(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const size_t split = text.find("\n---\n");
    Case c;
    c.name = file.filename().string();
    c.body = split == std::string::npos ? "" : text.substr(split + 5);
    std::istringstream header(text.substr(0, split));
    for (std::string line; std::getline(header, line);) {
        const size_t colon = line.find(": ");
        const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
        if (key == "status") c.status = std::stoi(value);
        else if (key == "message") c.message = value;
        else if (key == "method") c.method = value;
        else if (key == "target") c.target = value;
        else if (key == "raw") c.raw = value;
    }
    return c;
}

// "|" is CRLF; "@N" is N bytes of 'a'.
std::string rawBytes(const std::string& spec) {
    std::string out;
    for (size_t i = 0; i < spec.size(); ++i) {
        if (spec[i] == '|') {
            out += "\r\n";
        } else if (spec[i] == '@') {
            size_t end = i + 1;
            while (end < spec.size() && std::isdigit(static_cast<unsigned char>(spec[end]))) ++end;
            out += std::string(std::stoul(spec.substr(i + 1, end - i - 1)), 'a');
            i = end - 1;
        } else {
            out += spec[i];
        }
    }
    return out;
}

TEST(ServingAbuse, EveryBadRequestInTheCorpusGetsItsStatusAndMessage) {
    ServingServer server(test::denseServable(), test::smallOptions());
    server.start();
    HttpClient kept(server.port());  // one connection across the JSON-level cases: it stays usable
    int cases = 0;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(fs::path(TRAINBENCH_TEST_DATA_DIR) / "serving/bad_requests"))
        if (entry.path().extension() == ".req") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        const Case c = readCase(file);
        SCOPED_TRACE(c.name);
        ++cases;
        ASSERT_GT(c.status, 0);
        if (!c.raw.empty()) {
            const std::string reply = test::rawExchange(server.port(), rawBytes(c.raw));
            EXPECT_EQ(reply.rfind("HTTP/1.1 " + std::to_string(c.status) + " ", 0), 0u) << reply;
            EXPECT_NE(reply.find(c.message), std::string::npos) << reply;
        } else {
            const test::HttpReply reply = kept.request(c.method, c.target, c.body);
            EXPECT_EQ(reply.status, c.status) << reply.error << reply.body;
            const std::string error = reply.status ? nlohmann::json::parse(reply.body).value("error", "") : "";
            EXPECT_NE(error.find(c.message), std::string::npos) << error;
            test::expectPredictions(kept.request("POST", "/v1/models/dense:predict", kGood), {1, 2, 3, 4});
        }
        expectGoodRequestServed(server.port(), c.name);
    }
    EXPECT_GE(cases, 20);
}

// A client that sends its whole oversized body before it reads (no "Expect: 100-continue", as most
// HTTP libraries do) still reads the 413: the server does not reset the connection under it.
TEST(ServingAbuse, AClientSendingAnOversizedBodyAnywayReadsThe413) {
    ServingServer server(test::denseServable(), test::smallOptions());  // max_body_bytes 1 MiB
    server.start();
    for (int attempt = 0; attempt < 3; ++attempt) {
        const int fd = engine::test::connectToLoopback(server.port());
        timeval tv{10, 0};  // bounded: a server that neither reads nor closes fails the test
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        const std::string body(4 << 20, ' ');
        const std::string bytes = "POST /v1/models/dense:predict HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                  std::to_string(body.size()) + "\r\n\r\n" + body;
        for (size_t sent = 0; sent < bytes.size();) {  // all of it first, as a simple client does
            const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) break;
            sent += static_cast<size_t>(n);
        }
        std::string reply;
        char buf[4096];
        for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) reply.append(buf, static_cast<size_t>(n));
        ::close(fd);
        EXPECT_EQ(reply.rfind("HTTP/1.1 413 ", 0), 0u) << "attempt " << attempt << ": got '" << reply << "' (" << std::strerror(errno) << ")";
    }
    expectGoodRequestServed(server.port(), "oversized bodies");
}

TEST(ServingAbuse, BodiesBeingReadAtOnceAreCappedTogether) {
    ServingOptions o = test::smallOptions();
    o.limits.max_body_bytes = 1000;
    o.limits.max_inflight_body_bytes = 1500;
    ServingServer server(test::denseServable(), o);
    server.start();
    std::string body = kGood;
    body.resize(1000, ' ');
    const std::string header = "POST /v1/models/dense:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n";
    const int slow = engine::test::connectToLoopback(server.port());
    ASSERT_EQ(::send(slow, header.data(), header.size(), MSG_NOSIGNAL), static_cast<ssize_t>(header.size()));
    // The slow client's 1000 bytes are reserved once its header is read: a second body of 1000 does not fit.
    std::string refused;
    ASSERT_TRUE(becomesTrue([&] {
        refused = test::rawExchange(server.port(), header + body);
        return refused.rfind("HTTP/1.1 503 ", 0) == 0;
    }, 10s)) << refused;
    EXPECT_NE(refused.find("max_inflight_body_bytes 1500"), std::string::npos) << refused;
    ASSERT_EQ(::send(slow, body.data(), body.size(), MSG_NOSIGNAL), static_cast<ssize_t>(body.size()));
    std::string answer;
    char buf[4096];
    pollfd p{slow, POLLIN, 0};
    while (answer.find("predictions") == std::string::npos && ::poll(&p, 1, 10000) > 0) {
        const ssize_t n = ::recv(slow, buf, sizeof buf, 0);
        if (n <= 0) break;
        answer.append(buf, static_cast<size_t>(n));
    }
    ::close(slow);
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << answer;
    const std::string closing = "POST /v1/models/dense:predict HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1000\r\n\r\n";
    EXPECT_EQ(test::rawExchange(server.port(), closing + body).rfind("HTTP/1.1 200 ", 0), 0u) << "the budget was given back";
}

TEST(ServingAbuse, AHeaderTrickledByteByByteIsClosedAtTheHeaderDeadline) {
    ServingOptions o = test::smallOptions();
    o.limits.header_timeout = 1000ms;
    ServingServer server(test::denseServable(), o);
    server.start();
    const int fd = engine::test::connectToLoopback(server.port());
    const std::string header = "GET /v1/models/dense HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const auto start = std::chrono::steady_clock::now();
    bool closed = false;
    for (size_t i = 0; i < header.size() && !closed; ++i) {
        closed = ::send(fd, &header[i], 1, MSG_NOSIGNAL) != 1;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
            char b;
            closed = ::recv(fd, &b, 1, MSG_DONTWAIT) <= 0;
        }
        if (i == 5) expectGoodRequestServed(server.port(), "a trickle began");
    }
    const auto took = std::chrono::steady_clock::now() - start;
    ::close(fd);
    EXPECT_TRUE(closed) << "the trickling connection was still open after " << header.size() << " bytes";
    EXPECT_GE(took, 900ms);
    EXPECT_LT(took, 4s) << "closed at the 1 s header deadline, with slack";
    EXPECT_EQ(server.metrics().connectionsTimedOut.load(), 1);
}

// Reads until `fd` is closed by the server (true) or `limit` passes (false).
bool closedWithin(int fd, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    char buf[4096];
    while (std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 20) > 0 && ::recv(fd, buf, sizeof buf, MSG_DONTWAIT) <= 0) return true;
    }
    return false;
}

TEST(ServingAbuse, AKeptAliveConnectionIsClosedWhenIdleOrWhenItTricklesItsNextHeader) {
    ServingOptions o = test::smallOptions();
    o.limits.keepalive_timeout = 500ms;
    o.limits.header_timeout = 1000ms;
    ServingServer server(test::denseServable(), o);
    server.start();
    const std::string request = "GET /v1/models/dense HTTP/1.1\r\nHost: x\r\n\r\n";
    for (bool trickle : {false, true}) {
        SCOPED_TRACE(trickle ? "trickle" : "idle");
        const int fd = engine::test::connectToLoopback(server.port());
        ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
        char buf[4096];
        pollfd p{fd, POLLIN, 0};
        ASSERT_EQ(::poll(&p, 1, 10000), 1);
        ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0) << "the first request is answered";
        const auto start = std::chrono::steady_clock::now();
        if (trickle) {  // one byte before the keep-alive deadline, then the header's deadline runs
            std::this_thread::sleep_for(200ms);
            ASSERT_EQ(::send(fd, "G", 1, MSG_NOSIGNAL), 1);
        }
        EXPECT_TRUE(closedWithin(fd, 5s));
        const auto took = std::chrono::steady_clock::now() - start;
        EXPECT_GE(took, trickle ? 1100ms : 450ms) << "not before its deadline";
        EXPECT_LT(took, 4s);
        ::close(fd);
        expectGoodRequestServed(server.port(), trickle ? "a trickled second header" : "an idle kept-alive connection");
    }
    EXPECT_EQ(server.metrics().connectionsTimedOut.load(), 2);
}

TEST(ServingAbuse, TwoThousandIdleConnectionsDoNotStopGoodRequests) {
    ServingServer server(test::denseServable(), test::smallOptions());
    server.start();
    engine::test::IdleFlood flood(server.port(), 2000);
    ASSERT_TRUE(becomesTrue([&] { return server.metrics().connectionsOpen.load() >= 2000; }, 30s))
        << server.metrics().connectionsOpen.load() << " of 2000 idle connections accepted";
    for (int i = 0; i < 5; ++i) expectGoodRequestServed(server.port(), "2000 idle connections");
    EXPECT_EQ(flood.closedByServer(1, 100ms), 0u) << "within their header deadline, none was closed";
}

TEST(ServingAbuse, BeyondMaxConnectionsTheLongestIdleMakesRoomForANewClient) {
    ServingOptions o = test::smallOptions();
    o.limits.max_connections = 50;
    ServingServer server(test::denseServable(), o);
    server.start();
    engine::test::IdleFlood flood(server.port(), 60);
    EXPECT_EQ(flood.closedByServer(10, 10s), 10u) << "the 10 over the cap are closed at once";
    // Time is the point here: an idle connection gives its place up once it has idled a second.
    std::this_thread::sleep_for(1100ms);
    expectGoodRequestServed(server.port(), "a flood over max_connections");
    EXPECT_EQ(flood.closedByServer(11, 10s), 11u) << "one idle connection made room";
}

}  // namespace
}  // namespace trainbench::engine::serving
