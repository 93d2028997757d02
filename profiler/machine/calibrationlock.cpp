#include "profiler/machine/calibrationlock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <thread>

namespace trainbench::profiler {

namespace {

int openLockFile(const std::string& path) {
    // Read access is all flock() needs, so a file another user created (mode 0644 after umask)
    // works for everyone. With fs.protected_regular, O_CREAT on another user's file in a sticky
    // folder such as /tmp fails with EACCES even though the file exists: then open it plainly.
    int fd = open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EACCES) fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    return fd;
}

}  // namespace

CalibrationLock::CalibrationLock(std::chrono::milliseconds timeout, const std::string& path) {
    fd_ = openLockFile(path);
    if (fd_ < 0) return;
    // flock() cannot wait with a timeout, so poll; calibrations take about a second.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (flock(fd_, LOCK_EX | LOCK_NB) == 0) {
            held_ = true;
            return;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) return;
        if (std::chrono::steady_clock::now() >= deadline) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

CalibrationLock::~CalibrationLock() {
    // Closing the descriptor releases the lock.
    if (fd_ >= 0) close(fd_);
}

std::string CalibrationLock::defaultPath() {
    std::error_code error;
    std::filesystem::path folder = std::filesystem::temp_directory_path(error);
    if (error) folder = "/tmp";
    return (folder / "trainbench-calibration.lock").string();
}

}  // namespace trainbench::profiler
