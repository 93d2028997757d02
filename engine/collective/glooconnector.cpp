// The connecting side of a guarded Gloo connection (glooguard.h), on the thread that builds the
// GlooCollective: Gloo hands its non-blocking socket and the peer's published address to connect().
// It is completed here, the proof sent at once, and the peer's answer checked, all before Gloo
// registers the socket; a failure is returned as connect's error and kept to name the peer.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engine/net/deadlineio.h"
#include "engine/collective/glooguard.h"
#include "engine/collective/gloohandshake.h"

namespace trainbench::engine::glooguard {

namespace hs = gloohandshake;
using deadlineio::Clock;
using deadlineio::Result;

namespace {

int connectVerified(GlooSession* s, int fd, const sockaddr* address, socklen_t length) {
    sockaddr_storage to{};
    std::memcpy(&to, address, std::min<size_t>(length, sizeof to));
    const std::string where = hs::addressText(to);
    const int peer = s->destination(to);
    const auto fail = [&](int error, const std::string& what) {
        s->failed(s->who() + ": " + what);
        errno = error;
        return -1;
    };
    if (peer < 0) return fail(EACCES, "Gloo was to connect to " + where + ", which no rank published for this one");
    const std::string toPeer = "rank " + std::to_string(peer) + " at " + where;
    s->dropPlaceholder(peer);  // Gloo has just closed the stand-in it held for this pair
    const auto budget = s->timeout();
    const auto deadline = Clock::now() + budget;
    if (libcSocketCalls().connect(fd, address, length) != 0 && errno != EINPROGRESS)
        return fail(errno, "connecting to " + toPeer + ": " + std::strerror(errno));
    if (!deadlineio::waitFor(fd, POLLOUT, deadline))
        return fail(ETIMEDOUT, toPeer + " did not accept the connection within " + std::to_string(budget.count()) + " ms");
    int error = 0;
    socklen_t errorLength = sizeof error;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &errorLength);
    if (error != 0) return fail(error, "connecting to " + toPeer + ": " + std::strerror(error));

    const hs::PairOf pair{s->rank(), peer, where};
    const hs::Nonce nonce = hs::randomNonce();
    const hs::Hello hello = hs::makeHello(s->token(), pair, nonce);
    const Result sent = deadlineio::sendAll(fd, hello.data(), hello.size(), deadline);
    if (sent.end != Result::Done)
        return fail(sent.end == Result::TimedOut ? ETIMEDOUT : ECONNRESET,
                    "sending this rank's proof to " + toPeer + ": " + sent.describe("proof", budget));
    hs::Reply reply;
    const Result got = deadlineio::receiveAll(fd, reply.data(), reply.size(), deadline);
    if (got.end == Result::Closed)
        return fail(ECONNREFUSED, toPeer + " closed the connection instead of answering this rank's proof (it does not "
                                           "take it for its rank " + std::to_string(peer) + " of this job)");
    if (got.end != Result::Done)
        return fail(got.end == Result::TimedOut ? ETIMEDOUT : got.error,
                    toPeer + ": " + got.describe("answer to this rank's proof", budget));
    if (const std::string why = hs::checkReply(s->token(), pair, nonce, reply); !why.empty())
        return fail(EPROTO, "the listener at " + where + ": " + why);
    return 0;
}

}  // namespace

int connect(int fd, const sockaddr* address, socklen_t length) {
    const std::shared_ptr<GlooSession> s = GlooSession::current();
    if (!s) {
        errno = EPERM;  // libgloo outside a GlooCollective: refused, not let through unchecked
        return -1;
    }
    try {
        return connectVerified(s.get(), fd, address, length);
    } catch (const std::exception& e) {
        s->failed(s->who() + ": connecting: " + e.what());
        errno = EIO;
        return -1;
    }
}

}  // namespace trainbench::engine::glooguard
