#pragma once
// Hardware counters (cycles, instructions, cache references and misses) over a stretch of a run,
// through perf_event_open, counted in user space for every thread of the process. Where the machine
// does not allow them (no PMU in a VM, kernel.perf_event_paranoid, a container's seccomp profile)
// the result says so and why; nothing throws for that.
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/machine/machineinfo.h"

namespace trainbench::profiler {

class PerfCounters {
public:
    PerfCounters();
    ~PerfCounters();

    PerfCounters(const PerfCounters&) = delete;
    PerfCounters& operator=(const PerfCounters&) = delete;

    // Opens and starts the counters for every thread of this process that exists now (listed from
    // /proc/self/task, as `perf stat -p` does) and, through inheritance, every thread those create
    // later. So it may be called before or after the OpenMP team exists. A thread started while
    // start() lists the others, by a thread not yet counted, is missed. Calling start() again
    // starts afresh.
    void start();

    // Stops counting and returns the counts since start(), scaled up where the kernel multiplexed
    // the counters, or available = false with the reason (also when start() was never called).
    HardwareCounters stop();

private:
    struct Event {
        const char* name;          // as `perf stat -e` names it
        uint64_t config;           // PERF_COUNT_HW_*
        std::vector<int> fds;      // one per thread counted at start()
        std::string error;         // why it could not be opened
    };

    void closeAll();

    std::array<Event, 4> events_;  // cycles first: without it there is nothing worth reporting
    std::string reason_ = "the counters were not started";
    std::chrono::steady_clock::time_point started_;
    bool running_ = false;
};

}  // namespace trainbench::profiler
