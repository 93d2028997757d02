#pragma once
// Time- and cost-to-accuracy of one stored run for any target (DAWNBench's measures): the training
// seconds on the run's clock up to and including the step of its first test evaluation that reaches
// the target, and what those seconds cost. docs/time-to-accuracy.md gives the definition.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/evalsample.h"
#include "profiler/tta/pretraining.h"
#include "profiler/tta/targetaccuracy.h"
#include "profiler/store/runrow.h"
#include "profiler/verdict/stepsample.h"

namespace trainbench::profiler {

struct RunTimeToAccuracy {
    RunId run;
    bool reached = false;
    int evaluations = 0;                  // test evaluations recorded
    std::optional<double> best_accuracy;  // over them; nullopt without any
    // When reached: the step of the first evaluation at or above the target, the training seconds
    // of the run's steps up to it (evaluations and checkpoints excluded) on the run's clock ("wall"
    // or "virtual"), and the evaluations' own seconds up to and including that one (not in seconds).
    std::optional<int64_t> step;
    std::optional<double> seconds;
    std::optional<double> eval_seconds;
    // seconds x the run's price per second (devices and host); nullopt when no price is recorded.
    std::optional<double> cost;
    // A warm-started run: what training its checkpoint took (nullopt for a run from scratch).
    std::optional<Pretraining> pretraining;

    // Including the pre-training, when both parts are known.
    std::optional<double> secondsWithPretraining() const;
    std::optional<double> costWithPretraining() const;
};

// From the run's recorded steps (in step order) and evaluations; only "test" evaluations count.
RunTimeToAccuracy timeToAccuracy(const RunRow& run, const std::vector<StepSample>& steps,
                                 const std::vector<EvalSample>& evals, TargetAccuracy target);

}  // namespace trainbench::profiler
