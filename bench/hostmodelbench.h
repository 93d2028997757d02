#pragma once
// `trainbench-bench host-model`: the emulator configured as this host (device.type "cpu-host")
// against real runs of W1 and W2 under single (1 and 2 threads), mirrored (2 replicas) and
// multi_worker (2 processes): each configuration's predicted step time (`trainbench-cli estimate`)
// next to the median measured step of real runs (`trainbench-cli run`), and the calibration it
// came from. Every round calibrates afresh right before its run, so that both see the host at the
// same speed. The goal: within 15 %.
#include <string>
#include <vector>

namespace trainbench::bench {

struct HostModelBenchOptions {
    std::string cli;          // trainbench-cli
    std::string experiments;  // folder with fmnist-mlp.json and fmnist-cnn.json
    std::string db;           // run store (default: a fresh one in the temp folder, calibrated afresh)
    std::vector<std::string> workloads{"w1", "w2"};
    int rounds = 5;           // calibration + real run pairs per configuration; the median counts
    int steps = 200;          // steps per real run (the first 20 are left out)
};

// 0 when every run and estimate ran (whatever the errors), 1 otherwise.
int hostModelBench(const HostModelBenchOptions& options);

}  // namespace trainbench::bench
