#pragma once
// `trainbench-bench inference`: fp32 inference of W1 and W2, CompiledGraph (engine/inference/)
// against PyTorch's best CPU setup (bench/pytorch_infer.py: torch.jit trace + freeze, channels_last
// for W2, threads set, glibc's malloc thresholds raised) on the same weights and the same
// Fashion-MNIST test images, alternating (A, B, A, B, ...) in one invocation: batch-1 latency
// p50 / p99 over 2,000 queries and batch-256 examples/s, medians of the rounds and their ratio.
// The goals (21): >= 1.5x PyTorch's examples/s at batch 1 and 256, batch-1 latency <= 0.7x.
#include <string>
#include <vector>

namespace trainbench::bench {

struct InferenceBenchOptions {
    std::vector<std::string> workloads{"w1", "w2"};
    int threads = 2;
    int rounds = 3;       // pairs per workload; the median counts
    int queries = 2000;   // batch-1 queries per side and round
    int passes = 3;       // timed batch-256 passes over the test set per side and round (the best counts)
    std::string python = "/usr/bin/python3";  // Debian's interpreter (it has python3-torch)
    std::string peer;     // bench/pytorch_infer.py
    std::string data = "/usr/share/datasets/fashion-mnist";
    std::vector<std::string> peerArgs;  // extra arguments for the peer (--optimize-for-inference, --no-freeze)
    bool unfolded = false;  // serve the graph as built (no ReLU fusion), to show what fusion buys
};

// 0 when every side of every round ran, 1 otherwise.
int inferenceBench(const InferenceBenchOptions& options);

}  // namespace trainbench::bench
