#pragma once
// `trainbench-bench scaling`: the scaling sweep of the distribution strategies (bench/scalingbench.cpp).
// Each point of workload x mode x workers is one `trainbench-cli run` into one run store; the table
// is read back from that store, so the runs stay there for `trainbench-cli show` and the GUI.
#include <string>
#include <vector>

namespace trainbench::bench {

struct ScalingOptions {
    std::vector<std::string> workloads{"w1", "w2"};
    std::vector<int> workers{1, 2, 4};
    std::vector<std::string> modes{"sync", "async"};  // and "single": one device, `threads` threads
    std::string db = "scaling.db";
    int maxEpochs = 10;         // cap, so that a run that never reaches the target ends
    int servers = 1;            // async: parameter-server processes
    int threads = 1;            // compute threads per worker
    bool asyncFullBatch = false;  // async: each worker's step on the whole batch, not batch / N
    bool quick = false;         // smoke test: `quickSteps` steps, no evaluation, no target
    int quickSteps = 200;
    int repeats = 1;            // rounds over all points; figures are medians
    std::string cli;            // trainbench-cli to run
    std::string experiments;    // folder holding fmnist-mlp.json and fmnist-cnn.json
};

// Runs the sweep and prints a table per workload. Returns 0 when every run completed, 1 when any
// failed (it is reported in the table), 2 when the sweep could not start, 130 when stopped.
int scalingSweep(const ScalingOptions& options);

}  // namespace trainbench::bench
