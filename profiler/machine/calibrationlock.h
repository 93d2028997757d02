#pragma once
// Serialises calibrations between trainbench processes on one host. Two runs measuring at once
// (the workers of a job start together) would each see about half the machine and cache roofs that
// low for good; with the lock, the first measures and the others find its figures in the store.
// The lock is about the machine, not about a run store, so it is a file in the system temp folder,
// held with flock(): the kernel drops it when its holder exits, even on a crash.
#include <chrono>
#include <string>

namespace trainbench::profiler {

class CalibrationLock {
public:
    // Waits up to `timeout` for the lock. Never throws: when the file cannot be opened or the wait
    // times out, the lock is not held and the caller measures anyway (a disturbed measurement is
    // better than no run).
    explicit CalibrationLock(std::chrono::milliseconds timeout = std::chrono::seconds(30),
                             const std::string& path = defaultPath());
    ~CalibrationLock();

    CalibrationLock(const CalibrationLock&) = delete;
    CalibrationLock& operator=(const CalibrationLock&) = delete;

    bool held() const { return held_; }

    // <temp dir>/trainbench-calibration.lock, shared by every user of the host: they share its
    // cores too.
    static std::string defaultPath();

private:
    int fd_ = -1;
    bool held_ = false;
};

}  // namespace trainbench::profiler
