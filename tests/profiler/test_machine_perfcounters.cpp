// Hardware counters: where this kernel lets a process count its own cycles, a busy loop shows up in
// them, on threads started before and after start(); where it does not, the result says why,
// naming the event and the kernel's error. Which case applies is decided here independently, by
// asking perf_event_open directly.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "profiler/machine/perfcounters.h"

namespace trainbench::profiler {
namespace {

// Whether the kernel lets this thread count its own user-space cycles; errno text if not.
bool kernelCountsCycles(std::string& error) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0) {
        error = std::strerror(errno);
        return false;
    }
    close(static_cast<int>(fd));
    return true;
}

// About 4 instructions per iteration that the compiler cannot drop.
void spin(int64_t iterations) {
    volatile int64_t sink = 0;
    for (int64_t i = 0; i < iterations; ++i) sink = sink + i;
}

constexpr int64_t kIterations = 20'000'000;

TEST(PerfCounters, CountABusyLoopOrSayWhyNot) {
    std::string kernelError;
    const bool supported = kernelCountsCycles(kernelError);

    PerfCounters counters;
    counters.start();
    spin(kIterations);
    const HardwareCounters result = counters.stop();
    std::printf("[ counters ] %s\n", result.available ? "available" : result.unavailable_reason.c_str());
    EXPECT_EQ(result.available, supported) << result.unavailable_reason;
    if (supported) {
        EXPECT_GT(result.seconds, 0.0);
        ASSERT_TRUE(result.cycles && result.instructions);
        EXPECT_GT(*result.cycles, 0.0);
        EXPECT_GT(*result.instructions, static_cast<double>(kIterations));
    } else {
        EXPECT_FALSE(result.cycles || result.instructions || result.cache_references || result.cache_misses);
        EXPECT_NE(result.unavailable_reason.find("perf_event_open(cycles): " + kernelError), std::string::npos)
            << result.unavailable_reason;
        // And what to make of it: a missing PMU or a permission setting.
        EXPECT_TRUE(result.unavailable_reason.find("PMU") != std::string::npos ||
                    result.unavailable_reason.find("perf_event_paranoid") != std::string::npos ||
                    result.unavailable_reason.find("root") != std::string::npos)
            << result.unavailable_reason;
    }
}

TEST(PerfCounters, StopWithoutStartSaysSo) {
    PerfCounters counters;
    const HardwareCounters result = counters.stop();
    EXPECT_FALSE(result.available);
    EXPECT_NE(result.unavailable_reason.find("not started"), std::string::npos) << result.unavailable_reason;
}

TEST(PerfCounters, CountThreadsStartedBeforeAndAfterStart) {
    std::string kernelError;
    if (!kernelCountsCycles(kernelError)) GTEST_SKIP() << "no hardware counters here: " << kernelError;

    // A thread that exists before start() (as an OpenMP team would) and one created after it; the
    // calling thread itself does next to nothing.
    std::atomic<bool> go{false};
    std::thread before([&] {
        while (!go.load()) std::this_thread::yield();
        spin(kIterations);
    });
    PerfCounters counters;
    counters.start();
    go = true;
    std::thread after([] { spin(kIterations); });
    before.join();
    after.join();
    const HardwareCounters result = counters.stop();
    ASSERT_TRUE(result.available) << result.unavailable_reason;
    EXPECT_GT(*result.instructions, 2.0 * static_cast<double>(kIterations));
}

}  // namespace
}  // namespace trainbench::profiler
