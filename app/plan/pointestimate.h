#pragma once
// What the planner needs of each point of a sweep before it knows any run: which stored seed group
// it is (its key), which runs share its numerics, and — on an emulated device — its step time from
// the estimator (app/run/estimate.h) and its price. docs/time-to-accuracy.md, "Projections".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/experiment/sweep.h"

namespace trainbench::app {

struct PointEstimate {
    std::string name;          // the sweep point's name
    std::string seed_key;      // profiler::seedGroupKey of its resolved experiment
    std::string numerics_key;  // profiler::numericsKey; empty when the point cannot be estimated
    std::string devices;       // "tpu-v3:v3-32", or "cpu" for this host
    std::string strategy;
    // Virtual seconds of one training step on the devices alone (no input wait), and how the host's
    // infeed adds to it: with prefetch the step is max(device, infeed), without device + infeed.
    std::optional<double> device_step_seconds;
    std::optional<double> infeed_seconds;    // pinned by device.infeed_seconds_per_batch; nullopt: measure
    bool infeed_prefetch = true;
    std::optional<double> price_per_second;  // devices charged x price per device-hour / 3600
    std::optional<int64_t> run_steps;        // the steps the point trains (epochs or max_steps)
    std::string problem;       // why device_step_seconds is missing: a cpu point, a model that does not fit

    double stepSeconds(double infeed) const;
};

// One per point, in order. Opens each distinct data set once for its shape (as `estimate` does);
// throws what dataShapeOf throws when a data set cannot be read.
std::vector<PointEstimate> estimatePoints(const std::vector<SweepPoint>& points);

}  // namespace trainbench::app
