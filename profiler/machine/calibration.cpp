#include "profiler/machine/calibration.h"

#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/device/cpudevice.h"
#include "engine/tensor/tensor.h"
#include "profiler/machine/memoryprobe.h"

namespace trainbench::profiler {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// How long each roof may take to measure, and how many repetitions it gets whatever the time: the
// best of 3 already shrugs off one disturbed repetition.
constexpr double kPeakBudgetSeconds = 0.35;
constexpr double kTriadBudgetSeconds = 0.3;
constexpr int kMinRepetitions = 3;
constexpr int kMaxRepetitions = 30;

// Runs `once` (which returns its own duration) until the budget is spent, at least
// kMinRepetitions times; returns the best time and the count.
template <typename Once>
std::pair<double, int> bestOf(double budgetSeconds, Once&& once) {
    const auto start = Clock::now();
    double best = once();
    int repetitions = 1;
    while (repetitions < kMinRepetitions ||
           (repetitions < kMaxRepetitions && secondsSince(start) < budgetSeconds)) {
        best = std::min(best, once());
        ++repetitions;
    }
    return {best, repetitions};
}

// One n x n fp32 matmul on the device, ready to run again and again.
class Matmul {
public:
    Matmul(engine::CpuDevice& device, int64_t n)
        : device_(device),
          md_(engine::Tensor::plainDesc({n, n})),
          a_(md_, device.engine()),
          b_(md_, device.engine()),
          c_(md_, device.engine()),
          primitive_(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md_, md_, md_), device.engine())) {
        // Ordinary values: zeros could take a shortcut somewhere, denormals a slow path.
        std::fill(a_.data(), a_.data() + n * n, 0.5f);
        std::fill(b_.data(), b_.data() + n * n, 0.25f);
    }

    double once() {
        const auto start = Clock::now();
        primitive_.execute(device_.stream(), {{DNNL_ARG_SRC, a_.mem()},
                                              {DNNL_ARG_WEIGHTS, b_.mem()},
                                              {DNNL_ARG_DST, c_.mem()}});
        device_.stream().wait();
        return secondsSince(start);
    }

private:
    engine::CpuDevice& device_;
    dnnl::memory::desc md_;
    engine::Tensor a_, b_, c_;
    dnnl::matmul primitive_;
};

// Peak fp32 GFLOP/s: the best of square matmuls of growing size (512, 1024, 2048, 4096), until one
// product takes 5 ms. A small one runs from the caches, as a model's layers do, and on a few cores
// that is where the kernels peak (one Zen 5 core: 240 GFLOP/s at 512, 200 at 2048); a large one
// keeps many cores busy, which a small one cannot. Each timed sample repeats the product until it
// has run about 5 ms, so that thread wake-up and the timer vanish; the budget is shared by the sizes.
nlohmann::json measurePeak(engine::CpuDevice& device, double& gflops) {
    constexpr int64_t kSizes[] = {512, 1024, 2048, 4096};
    constexpr double kSampleSeconds = 0.005;
    nlohmann::json sizes = nlohmann::json::array();
    gflops = 0.0;
    int64_t bestN = 0;
    for (const int64_t n : kSizes) {
        Matmul matmul(device, n);
        matmul.once();  // first touch of the output, oneDNN's kernel generation
        const double probe = matmul.once();
        const int perSample = std::max(1, static_cast<int>(kSampleSeconds / std::max(probe, 1e-9)));
        auto [best, repetitions] = bestOf(kPeakBudgetSeconds / 3, [&] {
            double seconds = 0.0;
            for (int i = 0; i < perSample; ++i) seconds += matmul.once();
            return seconds / perSample;
        });
        best = std::min(best, probe);
        const double rate = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best / 1e9;
        sizes.push_back({{"n", n}, {"gflops", rate}, {"samples", repetitions}, {"products_per_sample", perSample}});
        if (rate > gflops) {
            gflops = rate;
            bestN = n;
        }
        if (probe >= kSampleSeconds) break;
    }
    return {{"matmul_n", bestN}, {"sizes", sizes}};
}

struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
};
using Array = std::unique_ptr<float, FreeDeleter>;

// 2 MiB aligned and marked for transparent huge pages where the kernel offers them: otherwise the
// first touch of ~400 MiB costs ~100k page faults, longer than the measurement itself.
Array allocateArray(size_t floats) {
    constexpr size_t kHugePage = size_t{2} << 20;
    const size_t bytes = (floats * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage;
    void* p = nullptr;
    if (posix_memalign(&p, kHugePage, bytes) != 0) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failing is fine
    return Array(static_cast<float*>(p));
}

// The triad's arrays: 4x the L3 cache in all, so no repetition is served from cache, between
// 3 x 64 MiB and 3 x 256 MiB; at least 2.5x the L3 where it is larger than 307 MiB (a virtual machine
// on a many-chiplet EPYC reports every chiplet's L3 together, 508 MiB).
size_t triadArrayFloats(size_t& l3Bytes) {
    const int64_t llc = lastLevelCacheBytes();
    l3Bytes = llc > 0 ? static_cast<size_t>(llc) : size_t{32} << 20;  // unknown: a large server's
    const size_t most = std::max(size_t{768} << 20, l3Bytes / 2 * 5);
    const size_t total = std::clamp(4 * l3Bytes, size_t{192} << 20, most);
    return total / 3 / sizeof(float) / 16 * 16;
}

// STREAM-triad GB/s, counted as STREAM does: 3 arrays x 4 bytes per element, without the
// write-allocate read of a, so figures compare with published STREAM results.
nlohmann::json measureBandwidth(int threads, double& gbs) {
    size_t l3Bytes = 0;
    const size_t n = triadArrayFloats(l3Bytes);
    Array arrayA = allocateArray(n), arrayB = allocateArray(n), arrayC = allocateArray(n);
    float* a = arrayA.get();
    float* b = arrayB.get();
    float* c = arrayC.get();
    // First touch with the same threads and static schedule as the triad, so on a NUMA machine each
    // thread's part lives next to it.
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t i = 0; i < n; ++i) {
        a[i] = 0.0f;
        b[i] = 1.0f;
        c[i] = 2.0f;
    }
    const float scalar = 3.0f;
    auto once = [&] {
        const auto start = Clock::now();
#pragma omp parallel for simd schedule(static) num_threads(threads)
        for (size_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
        return secondsSince(start);
    };
    once();  // warm-up: wakes the team, pulls the huge pages into the TLB
    const auto [best, repetitions] = bestOf(kTriadBudgetSeconds, once);
    // Reading a result keeps the loop from being optimised away and catches a broken kernel,
    // which would otherwise report an impossible bandwidth.
    if (a[n - 1] != 7.0f) throw std::logic_error("memory bandwidth calibration: the triad computed a wrong result");
    gbs = 3.0 * static_cast<double>(n) * sizeof(float) / best / 1e9;
    return {{"array_bytes", n * sizeof(float)}, {"l3_bytes", l3Bytes},
            {"repetitions", repetitions}, {"best_seconds", best}};
}

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    // x86 says "model name"; POWER says "cpu"; some ARM kernels only "Hardware".
    for (const char* key : {"model name", "cpu", "Hardware"}) {
        in.clear();
        in.seekg(0);
        while (std::getline(in, line)) {
            const auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string name = line.substr(0, colon);
            name.erase(name.find_last_not_of(" \t") + 1);
            if (name != key) continue;
            const auto value = line.find_first_not_of(" \t", colon + 1);
            if (value != std::string::npos) return line.substr(value);
        }
    }
    return "unknown";
}

}  // namespace

// The store's own timestamp format (strftime('%Y-%m-%dT%H:%M:%fZ')), so measured_at sorts with
// started_at and friends.
std::string utcNow() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[40];
    const size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(text + length, sizeof text - length, ".%03dZ", static_cast<int>(millis));
    return text;
}

int resolveThreads(int threads) { return threads > 0 ? threads : omp_get_num_procs(); }

std::string currentHost() {
    // As ProcessIdentity names the host of a run, so machines rows join with runs.
    char name[HOST_NAME_MAX + 1] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "localhost";
    return name;
}

MachineRoofs measureRoofs(int threads) {
    const auto start = Clock::now();
    MachineRoofs roofs;
    roofs.host = currentHost();
    roofs.threads = resolveThreads(threads);
    roofs.cpu_model = cpuModel();
    roofs.measured_at = utcNow();

    engine::CpuDevice device(roofs.threads);
    device.bindThreads();
    nlohmann::json details;
    // The matmul's buffers are freed before the triad allocates its own.
    details["peak"] = measurePeak(device, roofs.peak_gflops);
    details["bandwidth"] = measureBandwidth(roofs.threads, roofs.bandwidth_gbs);
    details["seconds"] = secondsSince(start);
    details["dnnl_version"] = std::to_string(dnnl_version()->major) + "." +
                              std::to_string(dnnl_version()->minor) + "." +
                              std::to_string(dnnl_version()->patch);
    roofs.details_json = details.dump();
    return roofs;
}

}  // namespace trainbench::profiler
