// Autotune: candidate pipeline settings measured on the source itself, within a time budget.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "engine/data/pipeline/streamingparts.h"

namespace trainbench::engine {

using namespace streaming;

// ---- Autotune ---------------------------------------------------------------------------------------

PipelineChoice StreamingPipeline::autotune(const DataConfig& data, const SourceFiles& source, int64_t batch_size,
                                           uint64_t seed, std::shared_ptr<Storage> storage, double budget_seconds) {
    const auto start = Clock::now();
    const int64_t files = static_cast<int64_t>(source.files.size()) /
                          (data.pipeline.shard_by == ShardBy::File ? std::max<int64_t>(1, data.pipeline.shard_count) : 1);
    const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    struct Trial {
        PipelineChoice c;
        double batchesPerSecond = 0;
        std::vector<double> batchSeconds;
    };
    // Each candidate makes batches for a fixed slice of the budget (after one warm-up batch) and is
    // scored by batches per second. Candidates are measured on a fresh pipeline, so a file-open cost
    // is paid as it will be in training.
    const int trialsPlanned = 8;
    const double slice = budget_seconds / trialsPlanned;
    std::string notes;
    auto measure = [&](PipelineChoice c) {
        Trial t;
        t.c = c;
        StreamingPipeline p(data, source, batch_size, false, false, seed, c, storage);
        p.startEpoch(0);
        int64_t epoch = 0;
        auto nextBatch = [&] {
            BatchView b = p.next();
            if (b.count == 0) {
                p.startEpoch(++epoch);
                b = p.next();
            }
            return b;
        };
        nextBatch();  // warm-up: first opens, first chunk
        const auto t0 = Clock::now();
        int64_t n = 0;
        for (;;) {
            const auto b0 = Clock::now();
            if (nextBatch().count == 0) break;
            t.batchSeconds.push_back(std::chrono::duration<double>(Clock::now() - b0).count());
            ++n;
            const double el = std::chrono::duration<double>(Clock::now() - t0).count();
            if (el >= slice && n >= 3) {
                t.batchesPerSecond = static_cast<double>(n) / el;
                break;
            }
        }
        char line[160];
        std::snprintf(line, sizeof line, "cycle_length %lld%s, map_parallel_calls %lld: %.1f batches/s\n",
                      static_cast<long long>(c.cycle_length), c.parallel_reads ? " (parallel)" : "",
                      static_cast<long long>(c.map_parallel_calls), t.batchesPerSecond);
        notes += line;
        return t;
    };
    // 1. Parallel reads: double the cycle length while it buys at least 10 %.
    PipelineChoice c;
    c.prefetch = 0;
    c.map_parallel_calls = 1;
    c.cycle_length = 1;
    c.parallel_reads = false;
    Trial best = measure(c);
    for (int64_t cycle = 2; cycle <= std::min<int64_t>(files, 64); cycle *= 2) {
        c.cycle_length = cycle;
        c.parallel_reads = true;
        Trial t = measure(c);
        if (t.batchesPerSecond < best.batchesPerSecond * 1.1) break;
        best = t;
    }
    // 2. Map parallelism, up to the core count, kept only if it buys at least 10 %.
    c = best.c;
    for (int64_t calls = 2; calls <= cores; calls *= 2) {
        c.map_parallel_calls = calls;
        Trial t = measure(c);
        if (t.batchesPerSecond < best.batchesPerSecond * 1.1) break;
        best = t;
    }
    // 3. Prefetch: deep enough to ride out the slowest batches (p95 / median production time).
    std::vector<double> v = best.batchSeconds;
    int64_t depth = 2;
    if (v.size() >= 3) {
        std::sort(v.begin(), v.end());
        const double med = v[v.size() / 2], p95 = v[std::min(v.size() - 1, v.size() * 95 / 100)];
        if (med > 0) depth = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(p95 / med)) + 1, 2, 16);
    }
    PipelineChoice out = best.c;
    out.prefetch = depth;
    out.autotuned = true;
    out.autotune_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    out.notes = notes + "prefetch " + std::to_string(depth) + " (batch time p95/median)";
    return out;
}

}  // namespace trainbench::engine
