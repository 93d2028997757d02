#pragma once
// `trainbench-bench serving-batching` and `serving-idle` (bench/servingbench.cpp): the inference
// server (engine/serving) with the tests' dense servable (serving-idle: or W1/W2), over loopback.
#include <cstdint>
#include <string>

namespace trainbench::bench {

struct ServingBenchOptions {
    int clients = 16;           // closed-loop clients (serving-batching)
    double seconds = 3;         // per side per round (serving-batching)
    int rounds = 3;             // A, B, A, B ... (serving-batching)
    int64_t maxBatch = 32;      // the batching side's max_batch_size (the other side: 1)
    int64_t overhead = 400000;  // the servable's per-call work (iterations)
    int64_t perExample = 4000;  // its per-example work
    int idle = 10000;           // idle connections (serving-idle)
    int requests = 300;         // good requests timed before and during the idle flood (serving-idle)
    std::string model = "dense";  // serving-idle: "dense", "w1" or "w2"
    std::string data = "/usr/share/datasets/fashion-mnist";  // serving-idle: test images for w1/w2
};

// Requests/s and latency p50/p99 of `clients` closed-loop clients, max_batch_size 1 against
// `maxBatch` (batch_timeout_micros 0, num_batch_threads 1), side by side.
int servingBatchingBench(const ServingBenchOptions& options);
// Batch-1 request latency p50/p99 without and with `idle` concurrent idle connections, held by a
// child process (this process's descriptors go to the server's side).
int servingIdleBench(const ServingBenchOptions& options);

}  // namespace trainbench::bench
