#pragma once
// `trainbench-bench imported-model`: W1 and W2 as PyTorch exports them to ONNX
// (bench/export_workloads_onnx.py), imported, against the same workloads as the engine's presets,
// side by side in alternating rounds: training steps (forward, backward, Adam; batch 128) and
// inference with CompiledGraph (batch 256 examples/s, batch-1 latency p50). The imported model
// trains on the layers its graph maps onto and serves its own graph. Issue 22's goal: the imported
// side >= 0.95x the preset's speed.
//
// With --accuracy: W1 and W2 trained by the CLI (`run experiments/fmnist-{mlp,cnn}.json`, the
// workloads' own settings) from the preset and from the PyTorch export (`--set model.onnx=...`),
// for several seeds, their final test accuracies side by side (issue 22: within 0.5 points).
#include <string>
#include <vector>

namespace trainbench::bench {

struct ImportedModelBenchOptions {
    std::vector<std::string> workloads{"w1", "w2"};
    int threads = 2;
    int rounds = 5;        // pairs per workload and measure; the median counts
    int trainSteps = 60;   // timed training steps per side and round (after 5 of warm-up)
    int queries = 1000;    // batch-1 queries per side and round
    std::string onnxDir;   // holds w1.onnx and w2.onnx; written with the script when they are missing
    std::string python = "/usr/bin/python3";
    bool accuracy = false;  // train to the end instead of timing steps
    int seeds = 3;          // --accuracy: runs per side and workload
    int epochsW1 = 5, epochsW2 = 3;
    std::string cli;        // trainbench-cli (the one built alongside by default)
};

// 0 when everything ran, 1 otherwise.
int importedModelBench(const ImportedModelBenchOptions& options);

}  // namespace trainbench::bench
