#pragma once
// Serialises calibrations between trainbench processes of one user on one host. Two runs measuring
// at once (the workers of a job start together) would each see about half the machine and cache
// roofs that low for good; with the lock, the first measures and the others find its figures in
// the store. The lock is about the machine, not about a run store, so it is a file in the user's
// runtime folder, held with flock(): the kernel drops it when its holder exits, even on a crash.
//
// The file is the user's own (created 0600 in a folder of the user's, never in a folder anyone can
// write such as /tmp), and it is opened with O_NOFOLLOW: a symbolic link planted at its path is
// refused, never followed, so the lock cannot be turned into creating or opening another file.
#include <chrono>
#include <stdexcept>
#include <string>

namespace trainbench::profiler {

// The lock's path is a symbolic link or not a regular file: refused. The message names the path.
class CalibrationLockError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class CalibrationLock {
public:
    // Waits up to `timeout` for the lock. When the file cannot be created (a read-only home, no
    // space) or the wait times out, the lock is not held and the caller measures anyway (a
    // disturbed measurement is better than no run). A symbolic link or anything but a regular
    // file at `path` (or at its folder) throws CalibrationLockError instead.
    explicit CalibrationLock(std::chrono::milliseconds timeout = std::chrono::seconds(30),
                             const std::string& path = defaultPath());
    ~CalibrationLock();

    CalibrationLock(const CalibrationLock&) = delete;
    CalibrationLock& operator=(const CalibrationLock&) = delete;

    bool held() const { return held_; }

    // <folder>/trainbench/calibration.lock, where folder is $XDG_RUNTIME_DIR when set, else
    // $XDG_CACHE_HOME, else ~/.cache (the XDG base directories: the user's own).
    static std::string defaultPath();

private:
    int fd_ = -1;
    bool held_ = false;
};

}  // namespace trainbench::profiler
