#include "profiler/machine/cacheprobe.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "engine/device/cpudevice.h"
#include "engine/emulation/kernelrates.h"
#include "profiler/machine/relativefit.h"

namespace trainbench::profiler {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kWarmup = 2;
constexpr int kTimed = 11;
constexpr double kStreamedPerElement = 28.0;  // read p, g, m, v; write p, m, v: as adam_update counts
constexpr double kHeldPerElement = 16.0;      // the four arrays

size_t elementsFor(double bytes) { return static_cast<size_t>(bytes / kHeldPerElement / 16) * 16; }

struct Arrays {
    std::vector<float> p, g, m, v;
    explicit Arrays(size_t n) : p(n, 1.0f), g(n, 1e-3f), m(n, 0.0f), v(n, 0.0f) {}
};

// One pass over the arrays, as an optimizer's update streams its state.
void update(Arrays& a, int threads) {
    float* p = a.p.data();
    const float* g = a.g.data();
    float* m = a.m.data();
    float* v = a.v.data();
    const auto n = static_cast<std::ptrdiff_t>(a.p.size());
#pragma omp parallel for simd schedule(static) num_threads(threads)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        const float mi = 0.9f * m[i] + 0.1f * g[i];
        const float vi = 0.999f * v[i] + 0.001f * g[i] * g[i];
        m[i] = mi;
        v[i] = vi;
        p[i] -= 1e-3f * mi * vi;
    }
}

}  // namespace

CacheCurve measureCacheCurve(int threads, int copies, double nominalCacheBytes) {
    CacheCurve curve;
    curve.copies = std::max(1, copies);
    // 4x the cache in all copies together, between 64 MiB and 512 MiB.
    const double top = std::clamp(4.0 * nominalCacheBytes, 64.0 * 1024 * 1024, 512.0 * 1024 * 1024) / curve.copies;
    std::vector<double> sizes;
    for (double s = 512.0 * 1024; s <= top * 1.0001; s *= std::sqrt(2.0)) sizes.push_back(s);

    std::vector<std::vector<double>> seconds(sizes.size(), std::vector<double>(static_cast<size_t>(kTimed)));
    std::barrier together(curve.copies);
    std::exception_ptr error;
    std::mutex mutex;  // guards `seconds` and `error`
    auto copy = [&] {
        try {
            engine::bindComputeThreads(threads);
            {
                // Wakes the core to full speed before the first, smallest size is timed.
                Arrays warm(elementsFor(1 << 20));
                const auto until = Clock::now() + std::chrono::milliseconds(50);
                while (Clock::now() < until) update(warm, threads);
            }
            for (size_t i = 0; i < sizes.size(); ++i) {
                Arrays a(elementsFor(sizes[i]));
                for (int r = 0; r < kWarmup + kTimed; ++r) {
                    together.arrive_and_wait();
                    const auto start = Clock::now();
                    update(a, threads);
                    const double t = std::chrono::duration<double>(Clock::now() - start).count();
                    if (r < kWarmup) continue;
                    // The slowest copy's time is the pass's: replicas wait for each other.
                    const std::lock_guard lock(mutex);
                    double& slot = seconds[i][static_cast<size_t>(r - kWarmup)];
                    slot = std::max(slot, t);
                }
            }
        } catch (...) {
            together.arrive_and_drop();
            const std::lock_guard lock(mutex);
            error = std::current_exception();
        }
    };
    std::vector<std::thread> others;
    for (int c = 1; c < curve.copies; ++c) others.emplace_back(copy);
    copy();
    for (std::thread& t : others) t.join();
    if (error) std::rethrow_exception(error);
    for (size_t i = 0; i < sizes.size(); ++i) {
        std::vector<double>& t = seconds[i];
        std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
        const auto elements = static_cast<double>(elementsFor(sizes[i]));
        curve.points.push_back({elements * kHeldPerElement, elements * kStreamedPerElement / t[t.size() / 2] / 1e9});
    }
    fitCacheCurve(curve);
    return curve;
}

void fitCacheCurve(CacheCurve& curve) {
    curve.effective_cache_bytes = 0.0;
    curve.slowdown = 0.0;
    curve.cached_gbs = 0.0;
    double largest = 0.0;
    std::vector<double> secondsPerGB;
    for (const CachePoint& p : curve.points) {
        largest = std::max(largest, p.bytes_per_copy * curve.copies);
        secondsPerGB.push_back(p.gbs_per_copy > 0 ? 1.0 / p.gbs_per_copy : 0.0);
    }
    // For each candidate cache, seconds per GB = a + b x spill with a > 0, b >= 0; the best wins.
    double bestResidual = std::numeric_limits<double>::infinity();
    for (double cache = 256.0 * 1024; cache <= largest; cache *= std::pow(2.0, 1.0 / 8)) {
        std::vector<std::vector<double>> rows;
        for (const CachePoint& p : curve.points)
            rows.push_back({1.0, engine::spillFraction(cache, p.bytes_per_copy, curve.copies)});
        const RelativeFit f = nonNegativeRelativeFit(rows, secondsPerGB, 0b01u);
        if (!f.found || !(f.x[0] > 0) || !(f.residual < bestResidual - 1e-12)) continue;
        bestResidual = f.residual;
        curve.effective_cache_bytes = f.x[1] > 0 ? cache : 0.0;
        curve.slowdown = f.x[1] / f.x[0];
        curve.cached_gbs = 1.0 / f.x[0];
    }
}

}  // namespace trainbench::profiler
