#include "engine/collective/glooguard.h"

#include <cerrno>

#include "engine/collective/gloohandshake.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

GlooGuard::GlooGuard(int rank, int size, const std::string& token, std::chrono::milliseconds timeout,
                     GlooSession::Report report) {
    if (const std::string why = unavailable(); !why.empty())
        throw CollectiveError("rank " + std::to_string(rank) + " of " + std::to_string(size) +
                              ": cannot authenticate Gloo's connections in this program: " + why);
    session_ = std::make_shared<GlooSession>(rank, size, token, timeout, std::move(report));
    GlooSession::setCurrent(session_);
}

GlooGuard::~GlooGuard() {
    session_->cancel();
    GlooSession::setCurrent(nullptr);
}

namespace glooguard {

int listen(int fd, int backlog) {
    const std::shared_ptr<GlooSession> s = GlooSession::current();
    if (!s) {
        errno = EPERM;  // libgloo outside a GlooCollective: refused, not let through unchecked
        return -1;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return -1;
    if (gloohandshake::isWildcard(bound)) {
        s->failed(s->who() + ": Gloo was to listen on " + gloohandshake::addressText(bound) +
                  ", every interface; it listens only on the task's own address");
        errno = EADDRNOTAVAIL;
        return -1;
    }
    if (libcSocketCalls().listen(fd, backlog) != 0) return -1;
    s->addListener(fd, bound);
    return 0;
}

}  // namespace glooguard

}  // namespace trainbench::engine
