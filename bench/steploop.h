#pragma once
// `trainbench-bench step-loop` and `instrumentation-cost` (bench/steploop.cpp,
// bench/instrumentationcost.cpp): what the profiler's instrumentation costs W1's training steps.
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::bench {

struct StepLoopOptions {
    int threads = 1;
    int64_t steps = 2000;
    int64_t skip = 20;         // warm-up steps left out of the figures (the trainer's kWarmupSteps)
    bool trace = false;        // a Chrome trace of every step, drained every step (needs profiling)
    std::string traceOut;      // where the trace is written; empty: a temp file, removed afterwards
};

// W1 (fmnist-mlp) trained by engine::Trainer exactly as `trainbench-cli run` drives it (in-memory
// Fashion-MNIST pipeline, SingleStrategy, Adam ε 1e-7, seed 42), for `steps` steps with no
// evaluation, into an observer that only keeps the times. Prints a summary line and, last, one JSON
// line (see bench/README.md). 0 on success, 2 on bad options.
int stepLoop(const StepLoopOptions& options);

struct InstrumentationCostOptions {
    std::string noprof;        // trainbench-bench built with TRAINBENCH_PROFILING=OFF
    std::vector<int> threads{1};
    int rounds = 5;
    int64_t steps = 2000;
};

// Child processes of step-loop, alternately: (A) the compiled-out binary, (B) this binary with
// always-on profiling, (C) this binary with --trace; `rounds` rounds of A, B, C per thread count.
// Prints medians and the ratios B/A (goal <= 1.01) and C/A (goal <= 1.05). 0 when every child ran
// (whether or not the goals are met), 1 when one failed, 2 for a missing noprof binary.
int instrumentationCost(const InstrumentationCostOptions& options);

}  // namespace trainbench::bench
