#pragma once
// `trainbench-bench classify` (bench/classifybench.cpp): reclassifying a stored run of 10,000 steps.
#include <cstdint>
#include <string>

namespace trainbench::bench {

struct ClassifyBenchOptions {
    int64_t steps = 10000;
    int reps = 7;
    std::string dir;    // where the temporary run store goes; empty: the system's temp folder
    bool keep = false;  // keep the run store (its path is printed)
};

// Records a W1-like run of `steps` steps into a fresh run store with RunWriter (step breakdown,
// evaluations, 20 op rows, memory attributes, the host's roofs in the machines table), then times
// what `trainbench-cli profile RUN --reclassify` does with it: RunStore::open, profileInput,
// classify and saveVerdict; prints the medians of `reps` repetitions against the 1 s goal.
int classifyBench(const ClassifyBenchOptions& options);

}  // namespace trainbench::bench
