#pragma once
// trainbench-cli plan-serving: which serving configuration — device x model instances x
// max_batch_size x batch_timeout_micros x precision — answers a target QPS within a p99 latency
// bound at the lowest cost per million predictions, and what precomputing a fraction of the
// predictions in batch would save. Each configuration's latency comes from the dynamic batcher
// replayed on a virtual clock (engine/serving/servingsimulation.h) with the device's estimated
// latency per batch size (engine/emulation/inferenceestimate.h).
//
// The quick search (as Triton Model Analyzer's) orders device x precision by a lower bound of their
// cost (all instances busy at the best batch's throughput), stops when the bound passes the best
// found, and per device x precision walks the instance counts upwards from the fewest that could
// carry the load, hill-climbing over batch size and timeout to the lowest p99 until one meets the
// bound. The exhaustive search simulates every point of the grid.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/emulation/devicespec.h"
#include "engine/serving/servingsimulation.h"

namespace trainbench::app {

struct ServingGrid {
    std::vector<int64_t> instances = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
    std::vector<int64_t> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    std::vector<int64_t> timeouts_us = {0, 500, 1000, 2000, 5000, 10000};
};

// One device at one precision, as the planner sees it: its price and its latency per batch size.
struct ServingTarget {
    std::string device;                 // catalog id
    std::string label;                  // "A100 40GB" or "tpu-v3 core", for the table
    engine::Precision precision = engine::Precision::Fp32;
    double price_per_hour = 0.0;        // one instance's (a replica's)
    // Seconds of one batch of n examples; the model must fit at every batch of the grid.
    std::function<double(int64_t)> batchSeconds;
    std::string why_not;                // non-empty: it cannot run the model at all (shown, not searched)
};

struct ServingConfig {
    size_t target = 0;                  // index into the request's targets
    int64_t instances = 1, max_batch_size = 1, batch_timeout_us = 0;
};

struct ServingPoint {
    ServingConfig config;
    engine::serving::ServingSimResult sim;
    bool meets = false;                 // nothing refused, p99 within the bound
    double usd_per_million = 0.0;       // instances x price per hour, per million queries at the target QPS
};

struct ServingPlanRequest {
    double qps = 0.0;
    double p99_seconds = 0.0;
    std::vector<ServingTarget> targets;
    ServingGrid grid;
    double request_overhead_seconds = 150e-6;  // per query outside the model: HTTP, JSON (docs/serving.md)
    int64_t queries = 20000;                   // simulated per point (at least 30 s of arrivals is not needed:
                                               // the p99 of 20,000 is within a few % of a longer run's)
    uint64_t seed = 1;
    bool exhaustive = false;
};

struct ServingPlan {
    std::vector<ServingPoint> ranked;   // the points meeting the bound that were simulated, cheapest first
    int64_t points_tried = 0;
    int64_t grid_points = 0;            // the whole grid over the searchable targets
};

// std::invalid_argument for qps or p99 that are not positive, or an empty grid.
ServingPlan planServing(const ServingPlanRequest& request);

// Cost of answering a million queries when `fraction` of them were precomputed in batch at
// `batchUsdPerMillion` and the rest are served online at `onlineUsdPerMillion` (per online query).
double splitCostPerMillion(double fraction, double batchUsdPerMillion, double onlineUsdPerMillion);

}  // namespace trainbench::app
