#pragma once
// Authenticates Gloo's TCP connections. Gloo (Debian's 2022 build) gives each pair of ranks a listening
// port on the task's address and takes the first connection that arrives there as the peer, without
// asking who it is: a stranger who connects first would be fed into the collective, or crash it. The
// guard sits under libgloo's own socket calls: this program defines accept, connect and listen
// (gloointerpose.cpp), which libgloo's calls resolve to; calls from anywhere else go straight to libc.
// For Gloo's calls:
//   listen   refuses a wildcard address (Gloo listens only on the task's own interface);
//   connect  completes the connection, sends the proof of gloohandshake.h and checks the answer;
//   accept   reads each arriving connection's proof, refuses (closes and reports, naming its address)
//            every one that does not prove the job token for this pair, and hands Gloo the peer's.
// Every wait ends at the collective's timeout. A GlooGuard lives while a GlooCollective meets its
// peers; libgloo's socket calls made outside one are refused (EPERM), never let through unchecked.
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>

#include "engine/collective/gloosession.h"

namespace trainbench::engine {

class GlooGuard {
public:
    // Makes this thread's Gloo socket calls belong to `rank` of `size`. Throws CollectiveError when
    // this program cannot route libgloo's calls through the guard (see unavailable()).
    GlooGuard(int rank, int size, const std::string& token, std::chrono::milliseconds timeout,
              GlooSession::Report report);
    ~GlooGuard();
    GlooGuard(const GlooGuard&) = delete;
    GlooGuard& operator=(const GlooGuard&) = delete;

    GlooSession& session() { return *session_; }
    // Ends a guarded accept that Gloo's loop thread is waiting in: call it before Gloo's pairs are
    // destroyed (their destructors wait for the loop).
    void cancel() { session_->cancel(); }

    // Why libgloo's socket calls would not reach the guard in this program ("" when they do): libgloo
    // not loaded as a shared library, or accept/connect/listen not exported by the executable.
    static std::string unavailable();

private:
    std::shared_ptr<GlooSession> session_;
};

// What the interposed calls do with a call from libgloo (gloointerpose.cpp calls these).
namespace glooguard {
int listen(int fd, int backlog);
int accept(int fd, sockaddr* address, socklen_t* length);
int connect(int fd, const sockaddr* address, socklen_t length);
}  // namespace glooguard

// The next definitions of the calls the guard interposes (libc's, or a sanitizer's in front of it).
struct SocketCalls {
    int (*accept)(int, sockaddr*, socklen_t*);
    int (*connect)(int, const sockaddr*, socklen_t);
    int (*listen)(int, int);
};
const SocketCalls& libcSocketCalls();

}  // namespace trainbench::engine
