#pragma once
// One evaluation as the run store recorded it: a row of the evals table, the read side's type (the
// reports, data-scaling, time-to-accuracy and the GUI get these, never the engine's EvalRecord,
// which is what the trainer hands the RunWriter). RunStore::evals reads them.
#include <cstdint>
#include <string>

namespace trainbench::profiler {

struct EvalSample {
    int64_t step = 0;
    int64_t epoch = 0;
    std::string split = "test";  // "test", "train", ...
    double loss = 0.0;
    double accuracy = 0.0;
    int64_t samples = 0;
    double eval_seconds = 0.0;  // time the evaluation took
    double wall_seconds = 0.0;  // training wall time (evaluations excluded) when it was taken
};

}  // namespace trainbench::profiler
