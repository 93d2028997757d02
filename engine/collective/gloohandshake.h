#pragma once
// The proof two ranks of a job exchange on each of Gloo's connections before Gloo sees a byte of it
// (engine/collective/glooguard.h installs it). Gloo's TCP pairs listen on routable ports and take the
// first connection that arrives as their peer; this is how a rank tells its peer from a stranger.
//
//   connector -> acceptor  hello (64 bytes): "TBGLOO1H" | connector rank u32 | acceptor rank u32 |
//                          nonce (16 random bytes) | HMAC-SHA256(token, context)
//   acceptor -> connector  reply (40 bytes): "TBGLOO1R" | HMAC-SHA256(token, context of the reply)
//
// The MACs cover the acceptor's listening address, both ranks and the connector's nonce: a hello
// proves the job token for this one pair and port (a proof made for another pair or port, or by
// another job, does not verify), and a reply proves the acceptor holds the token for this hello. The
// connector sends first and without waiting, so the acceptor never waits on anything but that send.
// Integers little-endian. Neither message is secret or encrypted: see docs/security.md.
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>

namespace trainbench::engine::gloohandshake {

constexpr size_t kHelloBytes = 64;
constexpr size_t kReplyBytes = 40;
using Hello = std::array<uint8_t, kHelloBytes>;
using Reply = std::array<uint8_t, kReplyBytes>;
using Nonce = std::array<uint8_t, 16>;

// One Gloo connection: who connects, who accepts, and the acceptor's listening address ("ip:port").
struct PairOf {
    int connector = -1;
    int acceptor = -1;
    std::string listener;
};

Nonce randomNonce();
Hello makeHello(const std::string& token, const PairOf& pair, const Nonce& nonce);

// What the acceptor learns from a hello that proves the token.
struct HelloCheck {
    std::string refused;  // why the hello is not from a rank of this job for this port ("" if it is)
    int connector = -1;
    Nonce nonce{};
};
// Why the first `got` bytes received cannot begin a hello, "" while they can: a stranger is refused
// before it has sent all 64.
std::string notAHello(const Hello& hello, size_t got);
// Checks a hello that arrived on `listener`, the listening port of rank `acceptor` (of `size`) for
// rank `expected` (-1: for any rank of the group).
HelloCheck checkHello(const std::string& token, const std::string& listener, int acceptor, int expected, int size,
                      const Hello& hello);

Reply makeReply(const std::string& token, const PairOf& pair, const Nonce& nonce);
// "" if `reply` proves the token for the hello this connector sent, else why not.
std::string checkReply(const std::string& token, const PairOf& pair, const Nonce& nonce, const Reply& reply);

// "127.0.0.1:40001", "[::1]:40001": an address as messages and MACs spell it.
std::string addressText(const sockaddr_storage& address);
std::string addressText(const sockaddr* address, socklen_t length);
// 0.0.0.0 or ::, which listen on every interface.
bool isWildcard(const sockaddr_storage& address);

}  // namespace trainbench::engine::gloohandshake
