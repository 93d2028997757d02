// Machine calibration: the roofs measured on this host are plausible for any CPU of the last
// decade, come with the host, thread count, CPU and time they belong to, and say how they were
// measured.
#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <regex>

#include <nlohmann/json.hpp>

#include "profiler/machine/calibration.h"

namespace trainbench::profiler {
namespace {

TEST(Calibration, OneThreadGivesPlausibleRoofsQuickly) {
    const auto start = std::chrono::steady_clock::now();
    const MachineRoofs roofs = measureRoofs(1);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[  roofs   ] 1 thread: %.1f GFLOP/s, %.1f GB/s, ridge %.1f FLOP/B, %.2f s\n%s\n", roofs.peak_gflops,
                roofs.bandwidth_gbs, roofs.ridge(), seconds, roofs.details_json.c_str());

    EXPECT_EQ(roofs.threads, 1);
    EXPECT_EQ(roofs.host, currentHost());
    EXPECT_FALSE(roofs.host.empty());
    EXPECT_FALSE(roofs.cpu_model.empty());
    // Wide bounds: a debug build under ASan (the dev preset) runs the triad unoptimised and instrumented.
    EXPECT_GT(roofs.peak_gflops, 1.0);
    EXPECT_LT(roofs.peak_gflops, 10000.0);
    EXPECT_GT(roofs.bandwidth_gbs, 0.05);
    EXPECT_LT(roofs.bandwidth_gbs, 2000.0);
    EXPECT_DOUBLE_EQ(roofs.ridge(), roofs.peak_gflops / roofs.bandwidth_gbs);
    // The store's timestamp format, so it sorts with runs.started_at.
    EXPECT_TRUE(std::regex_match(roofs.measured_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << roofs.measured_at;
    // How long it takes is a benchmark's business (it is about a second here); `seconds` is printed.
    std::printf("calibration at 1 thread took %.2f s\n", seconds);

    const auto details = nlohmann::json::parse(roofs.details_json);
    // The peak is the best of the sizes measured, from a cache-resident 512 up to one whose product
    // takes 5 ms (or the largest); each size's samples are its best of at least three.
    const auto& sizes = details["peak"]["sizes"];
    ASSERT_TRUE(sizes.is_array());
    ASSERT_FALSE(sizes.empty());
    EXPECT_EQ(sizes[0]["n"].get<int>(), 512);
    double best = 0.0;
    int bestN = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        EXPECT_GE(sizes[i]["samples"].get<int>(), 3);
        if (i > 0) {
            EXPECT_EQ(sizes[i]["n"].get<int>(), 2 * sizes[i - 1]["n"].get<int>());
        }
        if (sizes[i]["gflops"].get<double>() > best) {
            best = sizes[i]["gflops"].get<double>();
            bestN = sizes[i]["n"].get<int>();
        }
    }
    EXPECT_DOUBLE_EQ(roofs.peak_gflops, best);
    EXPECT_EQ(details["peak"]["matmul_n"].get<int>(), bestN);
    EXPECT_GE(details["bandwidth"]["repetitions"].get<int>(), 3);
    // Far larger than the last-level cache, or the triad measures the cache.
    EXPECT_GE(details["bandwidth"]["array_bytes"].get<double>() * 3,
              2 * details["bandwidth"]["l3_bytes"].get<double>());
}

TEST(Calibration, ZeroThreadsMeansEveryCore) {
    EXPECT_EQ(resolveThreads(0), omp_get_num_procs());
    EXPECT_EQ(resolveThreads(-1), omp_get_num_procs());
    EXPECT_EQ(resolveThreads(3), 3);
}

}  // namespace
}  // namespace trainbench::profiler
