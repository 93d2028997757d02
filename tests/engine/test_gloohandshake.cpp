// The proof on Gloo's connections (engine/collective/gloohandshake.h): a hello and its reply verify for
// the pair and port they were made for, with the job's token, and for nothing else; each refusal
// says why. And Gloo's rule for which side of a pair connects, as the guard applies it.
#include "engine/collective/gloohandshake.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <string>

#include "engine/collective/glooaddressbook.h"

namespace trainbench::engine {
namespace {

namespace hs = gloohandshake;

const std::string kToken = "0123456789abcdef0123456789abcdef";
const std::string kPort = "10.0.0.2:40001";

TEST(GlooHandshake, AHelloVerifiesForItsPairAndPort) {
    const hs::Nonce nonce = hs::randomNonce();
    const hs::Hello hello = hs::makeHello(kToken, {2, 0, kPort}, nonce);
    for (int expected : {2, -1}) {
        const hs::HelloCheck c = hs::checkHello(kToken, kPort, 0, expected, 3, hello);
        EXPECT_EQ(c.refused, "");
        EXPECT_EQ(c.connector, 2);
        EXPECT_EQ(c.nonce, nonce);
    }
}

TEST(GlooHandshake, AHelloIsRefusedForAnythingElseSayingWhy) {
    const hs::Nonce nonce = hs::randomNonce();
    const hs::Hello hello = hs::makeHello(kToken, {2, 0, kPort}, nonce);
    const auto refusal = [&](const std::string& token, const std::string& port, int acceptor, int expected, int size,
                             const hs::Hello& h) { return hs::checkHello(token, port, acceptor, expected, size, h).refused; };
    EXPECT_NE(refusal("another job's token", kPort, 0, 2, 3, hello).find("does not match the job token"), std::string::npos);
    EXPECT_NE(refusal(kToken, "10.0.0.2:40002", 0, 2, 3, hello).find("does not match the job token for rank 2 to rank 0 "
                                                                     "on 10.0.0.2:40002"),
              std::string::npos)
        << "replayed on another port";
    EXPECT_NE(refusal(kToken, kPort, 1, 2, 3, hello).find("is addressed to rank 0, not to rank 1"), std::string::npos);
    EXPECT_NE(refusal(kToken, kPort, 0, 1, 3, hello).find("claims to be rank 2 but this port is rank 0's for rank 1"),
              std::string::npos);
    EXPECT_NE(refusal(kToken, kPort, 0, -1, 2, hello).find("not a peer in a group of 2"), std::string::npos);
    hs::Hello flipped = hello;
    flipped[40] ^= 1;
    EXPECT_NE(refusal(kToken, kPort, 0, 2, 3, flipped).find("does not match the job token"), std::string::npos);
    hs::Hello ranks = hello;
    ranks[8] = 1;  // claims another connector with the MAC of rank 2
    EXPECT_NE(refusal(kToken, kPort, 0, -1, 3, ranks).find("does not match the job token for rank 1"), std::string::npos);
}

TEST(GlooHandshake, AnythingButAHelloIsRefusedFromItsFirstBytes) {
    hs::Hello h{};
    const std::string http = "GET / HT";
    std::copy(http.begin(), http.end(), h.begin());
    EXPECT_EQ(hs::notAHello(h, 0), "");
    EXPECT_EQ(hs::notAHello(h, 3), "not a trainbench Gloo hello (first bytes 47 45 54 \"GET\")");
    const hs::Hello real = hs::makeHello(kToken, {1, 0, kPort}, hs::randomNonce());
    for (size_t got : {0u, 1u, 8u, 64u}) EXPECT_EQ(hs::notAHello(real, got), "") << got;
}

TEST(GlooHandshake, AReplyProvesTheTokenForThatHello) {
    const hs::PairOf pair{2, 0, kPort};
    const hs::Nonce nonce = hs::randomNonce();
    const hs::Reply reply = hs::makeReply(kToken, pair, nonce);
    EXPECT_EQ(hs::checkReply(kToken, pair, nonce, reply), "");
    EXPECT_NE(hs::checkReply("another job's token", pair, nonce, reply).find("does not prove the job token: it is not rank 0"),
              std::string::npos);
    EXPECT_NE(hs::checkReply(kToken, pair, hs::randomNonce(), reply), "") << "an answer to another hello";
    EXPECT_NE(hs::checkReply(kToken, {2, 0, "10.0.0.2:40002"}, nonce, reply), "");
    hs::Reply garbage{};
    EXPECT_NE(hs::checkReply(kToken, pair, nonce, garbage).find("not a trainbench Gloo reply"), std::string::npos);
}

sockaddr_storage v4(const char* ip, uint16_t port) {
    sockaddr_storage s{};
    auto& a = reinterpret_cast<sockaddr_in&>(s);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, ip, &a.sin_addr);
    return s;
}

TEST(GlooAddressBook, OneSideOfEveryPairConnects) {
    // The address's bytes decide first, then the port as Gloo compares it (in network order).
    EXPECT_TRUE(glooConnectsOut(v4("127.0.0.2", 1000), v4("127.0.0.1", 2000)));
    EXPECT_FALSE(glooConnectsOut(v4("127.0.0.1", 2000), v4("127.0.0.2", 1000)));
    EXPECT_TRUE(glooConnectsOut(v4("10.0.0.1", 0x0102), v4("10.0.0.1", 0x0201)));  // 0x0201 < 0x0102 in network order
    EXPECT_FALSE(glooConnectsOut(v4("10.0.0.1", 0x0201), v4("10.0.0.1", 0x0102)));
    EXPECT_EQ(hs::addressText(v4("10.0.0.1", 40001)), "10.0.0.1:40001");
}

}  // namespace
}  // namespace trainbench::engine
