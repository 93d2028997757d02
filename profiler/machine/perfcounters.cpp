#include "profiler/machine/perfcounters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

namespace trainbench::profiler {

namespace {

// Every thread of this process now, or just the calling one if /proc is not there.
std::vector<pid_t> threadsOfProcess() {
    std::vector<pid_t> tids;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", error)) {
        try {
            tids.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
        } catch (const std::exception&) {
        }
    }
    if (tids.empty()) tids.push_back(static_cast<pid_t>(syscall(SYS_gettid)));
    return tids;
}

int openCounter(uint64_t config, pid_t tid) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    attr.disabled = 1;        // all start together, with the enable below
    attr.exclude_kernel = 1;  // the run's own work; also all that paranoid level 2 allows
    attr.exclude_hv = 1;
    attr.inherit = 1;         // threads this one creates later count too
    // inherit cannot be combined with PERF_FORMAT_GROUP reads, hence one descriptor per event,
    // each with its own times to undo multiplexing.
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string paranoidLevel() {
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    std::string level;
    in >> level;
    return level;
}

// The errno text and what it most likely means on a Linux host.
std::string describeFailure(const char* event, int error) {
    std::string text = std::string("perf_event_open(") + event + "): " + std::strerror(error);
    switch (error) {
        case ENOENT:
        case EOPNOTSUPP:
        case ENODEV:
            return text + ": the CPU or hypervisor exposes no PMU for this event (usual in VMs)";
        case EACCES:
        case EPERM: {
            const std::string level = paranoidLevel();
            if (level.empty()) return text + ": not permitted; run as root or with CAP_PERFMON";
            text += ": kernel.perf_event_paranoid is " + level +
                    "; run as root (or with CAP_PERFMON) or lower it (sysctl kernel.perf_event_paranoid=2)";
            // Level 2 and below allow counting one's own process in user space.
            if (level.size() == 1 && level[0] <= '2') text += ", or a container's seccomp profile forbids the call";
            return text;
        }
        case ENOSYS: return text + ": the kernel has no perf events (CONFIG_PERF_EVENTS)";
        case EMFILE: return text + ": too many open files (one descriptor per thread and event)";
        case EBUSY: return text + ": another user holds the PMU exclusively";
        default: return text;
    }
}

struct Reading {
    uint64_t value = 0, enabled = 0, running = 0;
};

}  // namespace

PerfCounters::PerfCounters()
    : events_{{{"cycles", PERF_COUNT_HW_CPU_CYCLES, {}, {}},
               {"instructions", PERF_COUNT_HW_INSTRUCTIONS, {}, {}},
               {"cache-references", PERF_COUNT_HW_CACHE_REFERENCES, {}, {}},
               {"cache-misses", PERF_COUNT_HW_CACHE_MISSES, {}, {}}}} {}

PerfCounters::~PerfCounters() { closeAll(); }

void PerfCounters::closeAll() {
    for (Event& event : events_) {
        for (const int fd : event.fds) close(fd);
        event.fds.clear();
        event.error.clear();
    }
    running_ = false;
}

void PerfCounters::start() {
    closeAll();
    const std::vector<pid_t> tids = threadsOfProcess();
    for (Event& event : events_) {
        for (const pid_t tid : tids) {
            const int fd = openCounter(event.config, tid);
            if (fd >= 0) {
                event.fds.push_back(fd);
                continue;
            }
            const int error = errno;
            if (error == ESRCH) continue;  // the thread ended after it was listed
            event.error = describeFailure(event.name, error);
            for (const int open : event.fds) close(open);
            event.fds.clear();
            break;
        }
        if (&event == &events_[0] && event.fds.empty()) {
            // Without cycles there is nothing worth reporting (and the others fail alike).
            reason_ = event.error.empty() ? "perf_event_open(cycles): no thread to count" : event.error;
            closeAll();
            return;
        }
    }
    for (const Event& event : events_) {
        for (const int fd : event.fds) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    }
    started_ = std::chrono::steady_clock::now();
    running_ = true;
}

HardwareCounters PerfCounters::stop() {
    HardwareCounters result;
    if (!running_) {
        result.unavailable_reason = reason_;
        return result;
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    for (const Event& event : events_) {
        for (const int fd : event.fds) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    }
    std::vector<std::string> missing;
    std::array<std::optional<double>, 4> values;
    for (size_t i = 0; i < events_.size(); ++i) {
        const Event& event = events_[i];
        if (event.fds.empty()) {
            missing.push_back(event.error);
            continue;
        }
        // Each read covers the thread and, through inherit, the threads it created (ended or not).
        double total = 0.0;
        bool counted = false;
        for (const int fd : event.fds) {
            Reading reading;
            if (read(fd, &reading, sizeof reading) != static_cast<ssize_t>(sizeof reading)) continue;
            if (reading.running == 0) continue;  // never on the PMU: nothing to scale
            counted = true;
            // Multiplexed with other events: it counted `running` of `enabled` ns; extrapolate.
            total += static_cast<double>(reading.value) * static_cast<double>(reading.enabled) /
                     static_cast<double>(reading.running);
        }
        if (counted) {
            values[i] = total;
        } else {
            missing.push_back(std::string(event.name) + ": never scheduled on the PMU (other users hold its counters)");
        }
    }
    closeAll();
    result.cycles = values[0];
    result.instructions = values[1];
    result.cache_references = values[2];
    result.cache_misses = values[3];
    result.available = result.cycles.has_value();
    for (const std::string& text : missing) {
        result.unavailable_reason += (result.unavailable_reason.empty() ? "" : "; ") + text;
    }
    reason_ = "the counters were not started";
    return result;
}

}  // namespace trainbench::profiler
