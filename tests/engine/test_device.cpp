// A CPU device runs its kernels with denormals flushed to zero in every thread of its team: a
// denormal in a GEMM costs ~100 cycles, and training produces them.
#include <gtest/gtest.h>

#include <omp.h>

#include <limits>
#include <vector>

#include "engine/device/cpudevice.h"

using trainbench::engine::CpuDevice;

namespace {
// Through a volatile, so the compiler cannot fold the arithmetic at compile time.
float halve(float x) {
    volatile float v = x;
    return v * 0.5f;
}
}  // namespace

TEST(CpuDevice, FlushesDenormalsInEveryThreadOfItsTeam) {
    CpuDevice device(2);
    EXPECT_EQ(device.threads(), 2);
    const float smallest = std::numeric_limits<float>::min();  // smallest normal; half of it is denormal
    std::vector<float> results(2, -1.0f);
#pragma omp parallel num_threads(2)
    results[static_cast<size_t>(omp_get_thread_num())] = halve(smallest);
    EXPECT_EQ(results[0], 0.0f);
    EXPECT_EQ(results[1], 0.0f);
    // Denormal inputs read as zero too (DAZ).
    volatile float denormal = std::numeric_limits<float>::denorm_min();
    EXPECT_EQ(denormal * 1.0f, 0.0f);
}

TEST(CpuDevice, ZeroThreadsMeansEveryCore) {
    CpuDevice device(0);
    EXPECT_GE(device.threads(), 1);
    EXPECT_EQ(omp_get_max_threads(), device.threads());
}
