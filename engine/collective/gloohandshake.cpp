#include "engine/collective/gloohandshake.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "engine/util/littleendian.h"
#include "engine/util/sha256.h"

namespace trainbench::engine::gloohandshake {

namespace {

constexpr char kHelloMagic[8] = {'T', 'B', 'G', 'L', 'O', 'O', '1', 'H'};
constexpr char kReplyMagic[8] = {'T', 'B', 'G', 'L', 'O', 'O', '1', 'R'};

// What a MAC covers: the message's kind, the pair and its port, the connector's nonce.
std::string context(const char* kind, const PairOf& pair, const Nonce& nonce) {
    std::string s = std::string("trainbench gloo ") + kind + " v1\n" + pair.listener + "\n" +
                    std::to_string(pair.connector) + "\n" + std::to_string(pair.acceptor) + "\n";
    s.append(reinterpret_cast<const char*>(nonce.data()), nonce.size());
    return s;
}

// The first bytes of what a stranger sent, for the log: hex, and the printable ones as text.
std::string preview(const uint8_t* p, size_t n) {
    static const char* hex = "0123456789abcdef";
    std::string h, t;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) h += ' ';
        h += hex[p[i] >> 4];
        h += hex[p[i] & 15];
        t += p[i] >= 0x20 && p[i] < 0x7f ? static_cast<char>(p[i]) : '.';
    }
    return h + " \"" + t + "\"";
}

}  // namespace

Nonce randomNonce() {
    Nonce n;
    size_t got = 0;
    while (got < n.size()) {
        const ssize_t r = getrandom(n.data() + got, n.size() - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
        got += static_cast<size_t>(r);
    }
    return n;
}

Hello makeHello(const std::string& token, const PairOf& pair, const Nonce& nonce) {
    Hello h{};
    std::memcpy(h.data(), kHelloMagic, 8);
    store32(h.data() + 8, static_cast<uint32_t>(pair.connector));
    store32(h.data() + 12, static_cast<uint32_t>(pair.acceptor));
    std::memcpy(h.data() + 16, nonce.data(), nonce.size());
    const Sha256Digest mac = hmacSha256(token, context("hello", pair, nonce));
    std::memcpy(h.data() + 32, mac.data(), mac.size());
    return h;
}

std::string notAHello(const Hello& hello, size_t got) {
    if (std::memcmp(hello.data(), kHelloMagic, std::min<size_t>(got, sizeof kHelloMagic)) == 0) return {};
    return "not a trainbench Gloo hello (first bytes " + preview(hello.data(), std::min<size_t>(got, 16)) + ")";
}

HelloCheck checkHello(const std::string& token, const std::string& listener, int acceptor, int expected, int size,
                      const Hello& hello) {
    HelloCheck c;
    if (c.refused = notAHello(hello, hello.size()); !c.refused.empty()) return c;
    const uint32_t connector = load32(hello.data() + 8), claimedAcceptor = load32(hello.data() + 12);
    if (connector >= static_cast<uint32_t>(size) || static_cast<int>(connector) == acceptor) {
        c.refused = "claims to be rank " + std::to_string(connector) + ", not a peer in a group of " +
                    std::to_string(size) + " (this is rank " + std::to_string(acceptor) + ")";
        return c;
    }
    if (claimedAcceptor != static_cast<uint32_t>(acceptor)) {
        c.refused = "is addressed to rank " + std::to_string(claimedAcceptor) + ", not to rank " + std::to_string(acceptor);
        return c;
    }
    if (expected >= 0 && static_cast<int>(connector) != expected) {
        c.refused = "claims to be rank " + std::to_string(connector) + " but this port is rank " +
                    std::to_string(acceptor) + "'s for rank " + std::to_string(expected);
        return c;
    }
    std::memcpy(c.nonce.data(), hello.data() + 16, c.nonce.size());
    const PairOf pair{static_cast<int>(connector), acceptor, listener};
    Sha256Digest mac;
    std::memcpy(mac.data(), hello.data() + 32, mac.size());
    if (!sameDigest(mac, hmacSha256(token, context("hello", pair, c.nonce)))) {
        c.refused = "its proof does not match the job token for rank " + std::to_string(connector) + " to rank " +
                    std::to_string(acceptor) + " on " + listener;
        return c;
    }
    c.connector = static_cast<int>(connector);
    return c;
}

Reply makeReply(const std::string& token, const PairOf& pair, const Nonce& nonce) {
    Reply r{};
    std::memcpy(r.data(), kReplyMagic, 8);
    const Sha256Digest mac = hmacSha256(token, context("reply", pair, nonce));
    std::memcpy(r.data() + 8, mac.data(), mac.size());
    return r;
}

std::string checkReply(const std::string& token, const PairOf& pair, const Nonce& nonce, const Reply& reply) {
    if (std::memcmp(reply.data(), kReplyMagic, 8) != 0)
        return "its answer is not a trainbench Gloo reply (first bytes " + preview(reply.data(), 16) + ")";
    Sha256Digest mac;
    std::memcpy(mac.data(), reply.data() + 8, mac.size());
    if (!sameDigest(mac, hmacSha256(token, context("reply", pair, nonce))))
        return "its answer does not prove the job token: it is not rank " + std::to_string(pair.acceptor);
    return {};
}

std::string addressText(const sockaddr_storage& address) {
    char ip[INET6_ADDRSTRLEN] = "?";
    if (address.ss_family == AF_INET) {
        const auto& a = reinterpret_cast<const sockaddr_in&>(address);
        inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
        return std::string(ip) + ":" + std::to_string(ntohs(a.sin_port));
    }
    if (address.ss_family == AF_INET6) {
        const auto& a = reinterpret_cast<const sockaddr_in6&>(address);
        inet_ntop(AF_INET6, &a.sin6_addr, ip, sizeof ip);
        return "[" + std::string(ip) + "]:" + std::to_string(ntohs(a.sin6_port));
    }
    return "(address family " + std::to_string(address.ss_family) + ")";
}

std::string addressText(const sockaddr* address, socklen_t length) {
    sockaddr_storage s{};
    std::memcpy(&s, address, std::min<size_t>(length, sizeof s));
    return addressText(s);
}

bool isWildcard(const sockaddr_storage& address) {
    if (address.ss_family == AF_INET)
        return reinterpret_cast<const sockaddr_in&>(address).sin_addr.s_addr == htonl(INADDR_ANY);
    return address.ss_family == AF_INET6 &&
           IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(address).sin6_addr);
}

}  // namespace trainbench::engine::gloohandshake
