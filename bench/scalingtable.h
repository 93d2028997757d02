#pragma once
// The scaling sweep's table for one workload: a row per point (mode x workers) with the medians over
// its runs, speed-up and efficiency against the same mode on one worker, and what bounds it.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench/scalingpoint.h"

namespace trainbench::bench {

struct PointResults {
    SweepPoint point;
    std::vector<RunOutcome> runs;  // one per repeat that got to run
};

// The medians of one point's completed runs; empty optionals when no run gave the figure.
struct PointFigures {
    int runs = 0, completed = 0, reached = 0;
    std::optional<double> throughput, throughputMin, throughputMax;  // samples/s, steady state
    std::optional<double> timeToTarget;                              // training seconds
    std::optional<double> stepAtTarget, epochsAtTarget;              // epochs: samples / training set
    std::optional<double> bestAccuracy;                              // best over runs (for "not reached")
    std::optional<double> targetAccuracy;
    std::optional<double> computeShare, commShare, waitShare, inputShare;  // of training seconds
    std::optional<double> computePerSample;  // worker compute seconds per sample (all workers' time)
    std::optional<double> stalenessMean, stalenessP95;
    double othersCpusMax = 0.0;
};

PointFigures summarize(const PointResults& results);

// "compute (78 % of the time)", "communication (compute 29 %, exchange 45 %, other 26 %); compute per
// sample 1.8x of 1 worker; oversubscribed: 4 worker(s) x 1 thread(s) on 2 cores" — from the figures
// alone. Input wait from 20 % of the time up (TensorFlow Profiler's "highly") is input-bound.
// Otherwise a job whose workers compute less than half the time is communication-bound: what is not
// compute is the exchange (comm, wait) and per-step coordination the exchange figures do not
// include (multi_worker all-reduces the ranks' step records too). `base` is the same mode with one
// worker: against it a per-sample compute cost that grew says the compute itself scaled badly
// (smaller per-worker batches, contention for the cores).
std::string boundBy(const SweepPoint& point, const PointFigures& figures, const PointFigures* base, unsigned cores);

struct TableSettings {
    bool quick = false;
    unsigned cores = 1;
};

void printScalingTable(std::FILE* out, const Workload& workload, const std::vector<PointResults>& points,
                       const TableSettings& settings);

}  // namespace trainbench::bench
