#include "engine/net/deadlineio.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace trainbench::engine::deadlineio {

std::string Result::describe(const char* what, std::chrono::milliseconds budget) const {
    switch (end) {
        case Done: return "done";
        case Closed: return "closed the connection after " + std::to_string(bytes) + " byte(s) of the " + what;
        case TimedOut:
            return std::string(bytes == 0 ? "sent nothing" : "sent " + std::to_string(bytes) + " byte(s)") + " of the " +
                   what + " within " + std::to_string(budget.count()) + " ms";
        case Failed: return std::string(std::strerror(error)) + " after " + std::to_string(bytes) + " byte(s) of the " + what;
    }
    return {};
}

bool waitFor(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
        if (r > 0) return true;
        if (r < 0 && errno != EINTR) return true;  // let the send or recv report the error
    }
}

Result sendAll(int fd, const void* data, size_t size, Clock::time_point deadline) {
    Result r;
    const auto* p = static_cast<const char*>(data);
    while (r.bytes < size) {
        const ssize_t n = ::send(fd, p + r.bytes, size - r.bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            r.bytes += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!waitFor(fd, POLLOUT, deadline)) {
                r.end = Result::TimedOut;
                return r;
            }
            continue;
        }
        r.end = Result::Failed;
        r.error = n < 0 ? errno : EPIPE;
        return r;
    }
    return r;
}

Result receiveAll(int fd, void* data, size_t size, Clock::time_point deadline) {
    Result r;
    auto* p = static_cast<char*>(data);
    while (r.bytes < size) {
        const ssize_t n = ::recv(fd, p + r.bytes, size - r.bytes, MSG_DONTWAIT);
        if (n > 0) {
            r.bytes += static_cast<size_t>(n);
            continue;
        }
        if (n == 0) {
            r.end = Result::Closed;
            return r;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!waitFor(fd, POLLIN, deadline)) {
                r.end = Result::TimedOut;
                return r;
            }
            continue;
        }
        r.end = Result::Failed;
        r.error = errno;
        return r;
    }
    return r;
}

}  // namespace trainbench::engine::deadlineio
