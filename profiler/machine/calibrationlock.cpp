#include "profiler/machine/calibrationlock.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <thread>

namespace trainbench::profiler {

namespace {

namespace fs = std::filesystem;

bool isSymlink(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// The lock's folder, opened without following a link at its last step; created (0700) when missing.
int openFolder(const std::string& folder) {
    if (!isSymlink(folder) && !fs::exists(folder)) {
        std::error_code ec;
        fs::create_directories(fs::path(folder).parent_path(), ec);
        (void)::mkdir(folder.c_str(), 0700);
    }
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && isSymlink(folder))
        throw CalibrationLockError(folder + ": the calibration lock's folder is a symbolic link: refused, not followed");
    return fd;
}

// Read access is all flock() needs. O_NOFOLLOW: a link planted at the path fails with ELOOP rather
// than creating or opening its target; O_NONBLOCK: a planted pipe does not block the open.
int openLockFile(const std::string& path) {
    const fs::path p(path);
    const std::string folder = p.parent_path().empty() ? std::string(".") : p.parent_path().string();
    const int dirFd = openFolder(folder);
    if (dirFd < 0) return -1;
    const int fd = ::openat(dirFd, p.filename().c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
                            0600);
    const int err = errno;
    ::close(dirFd);
    if (fd < 0) {
        if (err == ELOOP)
            throw CalibrationLockError(path + ": the calibration lock is a symbolic link: refused, not followed (remove "
                                              "it; trainbench keeps a plain file there)");
        return -1;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw CalibrationLockError(path + ": the calibration lock is not a regular file: refused");
    }
    return fd;
}

}  // namespace

CalibrationLock::CalibrationLock(std::chrono::milliseconds timeout, const std::string& path) {
    if (path.empty()) return;
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
    // The XDG base directory spec: relative values are to be ignored.
    auto absolute = [](const char* name) -> const char* {
        const char* v = std::getenv(name);
        return v && v[0] == '/' ? v : nullptr;
    };
    fs::path base;
    if (const char* runtime = absolute("XDG_RUNTIME_DIR")) {
        base = runtime;
    } else if (const char* cache = absolute("XDG_CACHE_HOME")) {
        base = cache;
    } else if (const char* home = absolute("HOME")) {
        base = fs::path(home) / ".cache";
    } else if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir && pw->pw_dir[0] == '/') {
        base = fs::path(pw->pw_dir) / ".cache";
    } else {
        return {};  // nowhere of the user's own: no lock (the constructor finds no file)
    }
    return (base / "trainbench" / "calibration.lock").string();
}

}  // namespace trainbench::profiler
