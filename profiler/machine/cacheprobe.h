#pragma once
// How this host's memory traffic slows down as a step's data outgrows its caches: a kernel that
// streams like an optimizer update (four arrays, seven streams) sweeps working sets from half a
// megabyte to several times the last-level cache, with `copies` of it side by side as replicas
// share the caches. The rate falls gradually, not at the cache's nominal size: on a virtual machine
// other tenants' cores share the last-level cache, and no cache is perfectly least-recently-used.
// The curve is summed up (fitCacheCurve) as the effective cache and the slowdown of bytes beyond
// it, which the host's kernel rates apply to every op (engine/emulation/kernelrates.h).
#include <vector>

namespace trainbench::profiler {

struct CachePoint {
    double bytes_per_copy = 0.0;  // the sweep's working set, one copy
    double gbs_per_copy = 0.0;    // bytes streamed per second by one copy (the slowest), typical
};

struct CacheCurve {
    int copies = 1;
    std::vector<CachePoint> points;
    // The fit: 1 / rate = (1 + slowdown x spill) / cached rate, spill = the part of all copies'
    // working sets beyond effective_cache_bytes (engine::spillFraction).
    double effective_cache_bytes = 0.0;
    double slowdown = 0.0;           // bytes beyond the cache take (1 + slowdown) times as long
    double cached_gbs = 0.0;         // the rate while everything fits
};

// Sweeps with `threads` OpenMP threads per copy; well under a second. `nominalCacheBytes`
// (lastLevelCacheBytes(), 0 if unknown) sets how far: to 4x it in all copies together, between
// 64 MiB and 512 MiB.
CacheCurve measureCacheCurve(int threads, int copies, double nominalCacheBytes);

// Fits effective_cache_bytes, slowdown and cached_gbs to `curve.points` (relative least squares, the
// cache by a search over sizes). No slowdown when the rate does not fall.
void fitCacheCurve(CacheCurve& curve);

}  // namespace trainbench::profiler
