#pragma once
// How busy the rest of the machine was while a CLI run went on: the machine's busy CPU time
// (/proc/stat) minus the run's own (its rusage, children included), per second of wall time. On a
// shared 2-core VM a build taking a core changes a run's timing far more than any margin a test
// can allow (a 2-thread step waits for its descheduled thread at every barrier), so the timing
// tests use this to tell a fair measurement from one they must repeat.
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "tests/integration/clirunner.h"

namespace trainbench::testing {

// Mean cores other processes may keep busy while a run still counts as measured on a quiet
// machine. An idle VM shows a few hundredths (daemons, the test itself, loopback interrupts); a
// fifth of a core already cost a one-thread run a third of its throughput here.
inline constexpr double kQuietOtherCores = 0.15;

// CPU seconds the machine spent busy since boot: /proc/stat's "cpu" line without idle and iowait.
// Steal counts as busy: the hypervisor gave that time to another guest.
inline double machineBusySeconds() {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    return static_cast<double>(user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Waits until other processes leave the cores alone (below kQuietOtherCores for a whole second,
// sampled every half second); false when that did not happen within `timeout`. Nothing of this
// test runs meanwhile, so all the busy time is other processes'.
inline bool waitForQuietMachine(std::chrono::seconds timeout) {
    using namespace std::chrono;
    constexpr auto kSample = milliseconds(500);
    const auto deadline = steady_clock::now() + timeout;
    int quietSamples = 0;
    double busy = machineBusySeconds();
    while (steady_clock::now() < deadline) {
        std::this_thread::sleep_for(kSample);
        const double now = machineBusySeconds();
        quietSamples = (now - busy) / duration<double>(kSample).count() < kQuietOtherCores ? quietSamples + 1 : 0;
        if (quietSamples == 2) return true;
        busy = now;
    }
    return false;
}

struct MeasuredCli {
    CliResult result;
    double wallSeconds = 0.0;
    double otherCores = 0.0;  // mean cores the rest of the machine kept busy meanwhile

    bool quiet() const { return otherCores < kQuietOtherCores; }
};

inline MeasuredCli runCliMeasured(std::vector<std::string> args, const std::filesystem::path& dir) {
    const double busyBefore = machineBusySeconds();
    const auto start = std::chrono::steady_clock::now();
    MeasuredCli m;
    m.result = runCli(std::move(args), dir);
    m.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double others = machineBusySeconds() - busyBefore - m.result.cpuSeconds;
    m.otherCores = m.wallSeconds > 0 && others > 0 ? others / m.wallSeconds : 0.0;
    return m;
}

}  // namespace trainbench::testing
