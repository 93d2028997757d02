// The rendezvous store's payloads (rendezvousmessages.h): every count and length is checked against the
// payload and its cap before anything is allocated, a payload decodes to one message that encodes
// back to it; and a client refuses a reply whose header claims more than a store ever sends,
// before allocating for it, naming the store.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/rendezvous/rendezvousclient.h"
#include "engine/rendezvous/rendezvousmessages.h"
#include "engine/rendezvous/rendezvouswire.h"
#include "engine/util/errors.h"

namespace trainbench::engine {
namespace {

using namespace rendezvouswire;
using namespace std::chrono_literals;

std::string decodeError(MessageType type, const std::string& payload, Request* out = nullptr) {
    Request r;
    return decodeRequest(static_cast<uint16_t>(type), reinterpret_cast<const uint8_t*>(payload.data()), payload.size(),
                         out ? out : &r);
}

std::string waitPayload(uint32_t count, std::size_t keys, const std::string& key = "k") {
    PayloadWriter w;
    w.u32(1000).u32(count);
    for (std::size_t i = 0; i < keys; ++i) w.str(key);
    return w.data();
}

TEST(StoreMessages, RequestsDecodeAndEncodeBackToTheSameBytes) {
    Request r;
    const std::string wait = waitPayload(3, 3);
    ASSERT_EQ(decodeError(MessageType::Wait, wait, &r), "");
    EXPECT_EQ(r.timeoutMs, 1000u);
    EXPECT_EQ(r.keys, (std::vector<std::string>{"k", "k", "k"}));
    EXPECT_EQ(encodeRequest(r), wait);
    const std::string set = PayloadWriter().str("rank_0").bytes("\0v", 2).data();
    ASSERT_EQ(decodeError(MessageType::Set, set, &r), "");
    EXPECT_EQ(r.key, "rank_0");
    EXPECT_EQ(r.value, (std::vector<char>{'\0', 'v'}));
    EXPECT_EQ(encodeRequest(r), set);
}

TEST(StoreMessages, CountsAndLengthsOverTheirCapsAreRefusedBeforeAllocating) {
    EXPECT_EQ(decodeError(MessageType::Wait, waitPayload(1'000'000, 0)),
              "malformed Wait payload: 1000000 keys promised, room for at most 0");
    EXPECT_EQ(decodeError(MessageType::Wait, waitPayload(4, 3)), "malformed Wait payload: 4 keys promised, room for at most 3");
    // The cap on the number of keys, just over and at it.
    EXPECT_EQ(decodeError(MessageType::Wait, waitPayload(kMaxWaitKeys + 1, kMaxWaitKeys + 1, "")),
              "malformed Wait payload: " + std::to_string(kMaxWaitKeys + 1) + " keys promised, room for at most " +
                  std::to_string(kMaxWaitKeys));
    EXPECT_EQ(decodeError(MessageType::Wait, waitPayload(kMaxWaitKeys, kMaxWaitKeys, "")), "");
    // Key and token lengths, just over and at their caps.
    EXPECT_EQ(decodeError(MessageType::Get, PayloadWriter().str(std::string(kMaxKeyBytes + 1, 'k')).data()),
              "malformed Get payload: key of 4097 bytes is over the cap of 4096 bytes");
    EXPECT_EQ(decodeError(MessageType::Get, PayloadWriter().str(std::string(kMaxKeyBytes, 'k')).data()), "");
    EXPECT_EQ(decodeError(MessageType::Hello, PayloadWriter().str(std::string(kMaxTokenBytes + 1, 't')).data()),
              "malformed Hello payload: token of 1025 bytes is over the cap of 1024 bytes");
    EXPECT_EQ(decodeError(MessageType::Hello, PayloadWriter().str(std::string(kMaxTokenBytes, 't')).data()), "");
    EXPECT_EQ(decodeError(MessageType::Set, PayloadWriter().u32(100).bytes("ab", 2).data()),
              "malformed Set payload: key of 100 bytes is longer than the rest of the payload (2 bytes)");
    EXPECT_EQ(decodeError(MessageType::Get, PayloadWriter().str("k").u32(7).data()),
              "malformed Get payload: 4 bytes after the message");
    EXPECT_EQ(decodeError(MessageType::Ok, ""), "unexpected message type 16 (Ok)");
    std::vector<std::string> keys;
    const std::string lying = PayloadWriter().u32(1u << 30).data();
    EXPECT_FALSE(decodeKeyList(reinterpret_cast<const uint8_t*>(lying.data()), lying.size(), &keys));
}

// A listening socket on loopback that answers the first message it gets with `reply` and then
// holds the connection open until the client goes away (at most `hold`).
class OneReplyServer {
public:
    explicit OneReplyServer(std::string reply) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(::listen(fd_, 1), 0);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this, reply = std::move(reply)] { serve(reply); });
    }
    ~OneReplyServer() {
        thread_.join();
        ::close(fd_);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

private:
    void serve(const std::string& reply) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 10'000) <= 0) return;
        const int c = ::accept(fd_, nullptr, nullptr);
        char buf[4096];
        if (::recv(c, buf, sizeof buf, 0) > 0) ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
        pollfd q{c, POLLIN, 0};
        while (::poll(&q, 1, 10'000) > 0 && ::recv(c, buf, sizeof buf, 0) > 0) {
        }
        ::close(c);
    }

    int fd_ = -1;
    uint16_t port_ = 0;
    std::thread thread_;
};

TEST(StoreMessages, AClientRefusesAReplyOverTheCapFromItsHeader) {
    uint8_t header[kHeaderBytes];
    encodeHeader(header, MessageType::Ok, 200u << 20);  // 200 MiB, and nothing follows
    OneReplyServer server(std::string(reinterpret_cast<const char*>(header), kHeaderBytes));
    const auto t0 = std::chrono::steady_clock::now();
    std::string error;
    try {
        RendezvousClient(server.address(), "token", 20s);
        ADD_FAILURE() << "expected a RendezvousError";
    } catch (const RendezvousError& e) {
        error = e.what();
    }
    // Before the cap: 200 MiB allocated, then a wait for them until the client's timeout.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
    EXPECT_EQ(error, "rendezvous store " + server.address() + ": bad reply to Hello: Ok message of " +
                         std::to_string(200u << 20) + " bytes exceeds the cap of " + std::to_string(kDefaultMaxPayload));
}

}  // namespace
}  // namespace trainbench::engine
