#pragma once
// A stored run with its time- and cost-to-accuracy for one target, as `trainbench-cli tta`, `plan`
// and the Plan page read them (readTimeToAccuracy).
#include <vector>

#include "profiler/tta/runtimetoaccuracy.h"
#include "profiler/store/runrow.h"

namespace trainbench::profiler {

class RunStore;

struct RunTta {
    RunRow row;
    RunTimeToAccuracy tta;
    // Emulated runs: the host's time to make one global batch, which the virtual clock charged
    // (run attribute virtual.infeed_seconds_per_batch); a projection from this run uses it too.
    std::optional<double> infeed_seconds;
};

// Reads each run's steps and evaluations (and a warm-started run's source) and computes its time
// to `target`, in the order given. Throws StoreError when the store cannot be read.
std::vector<RunTta> readTimeToAccuracy(RunStore& store, const std::vector<RunRow>& runs, TargetAccuracy target);

}  // namespace trainbench::profiler
