// The accepting side of a guarded Gloo connection (glooguard.h). Gloo's loop thread calls accept()
// on a pair's listening socket when a connection arrives; here every connection waiting there is
// taken and read at once, each that does not prove the job token for this pair is closed and
// reported with its address, and the first that does is answered and handed to Gloo. If the first
// arrivals are strangers this waits for the peer, up to the timeout (Gloo's loop waits with it).
//
// A pair whose rank connects out (Gloo closes its listener when it does) can still be reached by a
// stranger before then, and Gloo must be handed a socket: it gets a stand-in, a connection from
// this process to that same listener, which Gloo closes unused when it connects out (the session
// keeps the other end until then). Being accepted on the listener it keeps Gloo's idea of this
// pair's own address, so Gloo still decides to connect out.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "engine/net/deadlineio.h"
#include "engine/collective/glooguard.h"
#include "engine/collective/gloohandshake.h"

namespace trainbench::engine::glooguard {

namespace {

namespace hs = gloohandshake;
using deadlineio::Clock;

// Connections read at once; a further one pushes out the one that has been silent longest.
constexpr size_t kMaxPending = 8;

struct Candidate {
    int fd = -1;
    sockaddr_storage from{};
    hs::Hello hello{};
    size_t got = 0;
};

class Acceptor {
public:
    Acceptor(GlooSession& s, int listenFd)
        : s_(s), fd_(listenFd), budget_(s.timeout()), deadline_(Clock::now() + budget_) {}
    ~Acceptor() {
        for (Candidate& c : pending_) ::close(c.fd);
        if (standIn_ >= 0) ::close(standIn_);
    }

    // The verified peer's socket (its address in `from`), or -1 with errno set.
    int run(sockaddr_storage& from) {
        ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);  // Gloo closes it after this call
        for (;;) {
            const std::optional<GlooSession::Listener> self = s_.listener(fd_);
            if (!self) return fail(EBADF, "its listening socket is no longer known to the guard");
            self_ = *self;
            if (const std::optional<int> done = takeArrivals(from)) return *done;
            if (const std::optional<int> done = readProofs(from)) return *done;
            if (self_.side == GlooSession::Side::ConnectsOut && standIn_ < 0) openStandIn();
            if (s_.cancelled()) {
                refuseAll("sent no proof before the rendezvous ended");
                errno = ECANCELED;
                return -1;
            }
            if (Clock::now() >= deadline_) {
                refuseAll("sent no proof within " + std::to_string(budget_.count()) + " ms");
                return fail(ETIMEDOUT, "no connection to " + port() + " proved the job token within " +
                                           std::to_string(budget_.count()) + " ms");
            }
            wait();
        }
    }

private:
    std::string port() const {
        return self_.text + (self_.peer >= 0 ? " (rank " + std::to_string(s_.rank()) + "'s port for rank " +
                                                   std::to_string(self_.peer) + ")"
                                             : " (a port of rank " + std::to_string(s_.rank()) + ")");
    }

    int fail(int error, const std::string& what) {
        s_.failed(s_.who() + ": " + what);
        errno = error;
        return -1;
    }

    void refuse(Candidate& c, const std::string& why) {
        ::close(c.fd);
        c.fd = -1;
        s_.refused(port(), hs::addressText(c.from), why);
    }

    void refuseAll(const std::string& why) {
        for (Candidate& c : pending_) refuse(c, why);
        pending_.clear();
    }

    // Accepts every connection waiting. Returns what accept() is to return (the stand-in's accepted
    // end, or -1 if the listener failed), or nothing to go on.
    std::optional<int> takeArrivals(sockaddr_storage& from) {
        for (;;) {
            Candidate c;
            socklen_t length = sizeof c.from;
            c.fd = libcSocketCalls().accept(fd_, reinterpret_cast<sockaddr*>(&c.from), &length);
            if (c.fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED) continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK) return std::nullopt;
                const int error = errno;
                refuseAll("the listening socket failed");
                return fail(error, "accepting on " + port() + ": " + std::strerror(error));
            }
            if (standIn_ >= 0 && hs::addressText(c.from) == standInAddress_) {
                refuseAll("sent no proof before rank " + std::to_string(s_.rank()) + " connected out");
                s_.keepPlaceholder(self_.peer, standIn_);
                standIn_ = -1;
                from = c.from;
                return c.fd;
            }
            if (pending_.size() == kMaxPending) {
                refuse(pending_.front(), "sent no proof before " + std::to_string(kMaxPending) +
                                             " other connections arrived");
                pending_.erase(pending_.begin());
            }
            pending_.push_back(c);
        }
    }

    // Reads what the connections sent; answers and returns the first that proves the token.
    std::optional<int> readProofs(sockaddr_storage& from) {
        for (size_t i = 0; i < pending_.size();) {
            Candidate& c = pending_[i];
            const ssize_t n = ::recv(c.fd, c.hello.data() + c.got, c.hello.size() - c.got, MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                ++i;
                continue;
            }
            std::string why;
            if (n == 0) why = "closed the connection after " + std::to_string(c.got) + " byte(s), without a proof";
            if (n < 0) why = std::string(std::strerror(errno)) + " after " + std::to_string(c.got) + " byte(s)";
            if (n > 0) {
                c.got += static_cast<size_t>(n);
                why = hs::notAHello(c.hello, c.got);  // refused now, not once it has sent 64 bytes
                if (why.empty() && c.got < c.hello.size()) continue;  // read again: more may be there
            }
            if (why.empty()) {
                const hs::HelloCheck check = hs::checkHello(s_.token(), self_.text, s_.rank(), self_.peer, s_.size(), c.hello);
                why = check.refused.empty() ? answer(c, check) : check.refused;
                if (why.empty()) {
                    const Candidate peer = c;
                    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
                    refuseAll("sent no proof before rank " + std::to_string(check.connector) + "'s connection proved it");
                    from = peer.from;
                    return peer.fd;
                }
            }
            refuse(c, why);
            pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        }
        return std::nullopt;
    }

    // "" once the answer to a verified hello is sent, else why it could not be.
    std::string answer(const Candidate& c, const hs::HelloCheck& check) {
        const hs::Reply reply = hs::makeReply(s_.token(), {check.connector, s_.rank(), self_.text}, check.nonce);
        const deadlineio::Result sent = deadlineio::sendAll(c.fd, reply.data(), reply.size(), deadline_);
        return sent.end == deadlineio::Result::Done ? "" : "its proof held, but " + sent.describe("answer", budget_);
    }

    void openStandIn() {
        standIn_ = ::socket(self_.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (standIn_ < 0) return;
        const socklen_t length = self_.address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
        sockaddr_storage local{};
        socklen_t localLength = sizeof local;
        if ((libcSocketCalls().connect(standIn_, reinterpret_cast<const sockaddr*>(&self_.address), length) != 0 &&
             errno != EINPROGRESS) ||
            getsockname(standIn_, reinterpret_cast<sockaddr*>(&local), &localLength) != 0) {
            ::close(standIn_);
            standIn_ = -1;
            return;  // then this waits for the timeout, as without a stand-in
        }
        standInAddress_ = hs::addressText(local);
    }

    void wait() {
        std::vector<pollfd> fds{{fd_, POLLIN, 0}, {s_.wakeFd(), POLLIN, 0}};
        for (const Candidate& c : pending_) fds.push_back({c.fd, POLLIN, 0});
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
        ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<int64_t>(left, 1, 1000)));
        s_.drainWake();
    }

    GlooSession& s_;
    const int fd_;
    const std::chrono::milliseconds budget_;
    const Clock::time_point deadline_;
    GlooSession::Listener self_;
    std::vector<Candidate> pending_;
    int standIn_ = -1;
    std::string standInAddress_;
};

}  // namespace

int accept(int fd, sockaddr* address, socklen_t* length) {
    const std::shared_ptr<GlooSession> s = GlooSession::owning(fd);
    if (!s) {
        errno = EPERM;  // a listener no GlooCollective opened: refused, not let through unchecked
        return -1;
    }
    sockaddr_storage from{};
    int c = -1;
    try {
        c = Acceptor(*s, fd).run(from);
    } catch (const std::exception& e) {  // nothing may escape into Gloo's loop thread
        s->failed(s->who() + ": accepting a connection: " + e.what());
        errno = EIO;
        return -1;
    }
    if (c >= 0 && address && length) {
        const socklen_t size = from.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
        std::memcpy(address, &from, std::min(*length, size));
        *length = size;
    }
    return c;
}

}  // namespace trainbench::engine::glooguard
