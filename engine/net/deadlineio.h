#pragma once
// Blocking-style socket I/O with a deadline on sockets of any mode (poll, then MSG_DONTWAIT), for the
// guard's handshakes on Gloo's sockets (glooacceptor.cpp, glooconnector.cpp). SIGPIPE-free.
#include <chrono>
#include <cstddef>
#include <string>

namespace trainbench::engine::deadlineio {

using Clock = std::chrono::steady_clock;

struct Result {
    enum End { Done, Closed, TimedOut, Failed } end = Done;
    size_t bytes = 0;  // moved before the end
    int error = 0;     // errno, for Failed
    // "closed the connection after 3 byte(s)", "sent nothing within 2000 ms", "Connection reset by peer"
    std::string describe(const char* what, std::chrono::milliseconds budget) const;
};

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT); false when `deadline` passes first.
bool waitFor(int fd, short events, Clock::time_point deadline);
Result sendAll(int fd, const void* data, size_t size, Clock::time_point deadline);
Result receiveAll(int fd, void* data, size_t size, Clock::time_point deadline);

}  // namespace trainbench::engine::deadlineio
