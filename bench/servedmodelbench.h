#pragma once
// `trainbench-bench served-model` (bench/servedmodelbench.cpp): W1 and W2 served by the real
// inference server (app::graphServable on engine/serving) and measured by the real load generator
// (app/loadtest) over loopback, next to the same compiled graph called in-process, side by side in
// one invocation. Issue 21's goals:
//  * served batch-1 request p50 <= the in-process model call's p50 + 150 us;
//  * W2: the highest Server-scenario QPS meeting p99 <= 20 ms with dynamic batching >= 3x without.
#include <string>
#include <vector>

namespace trainbench::bench {

struct ServedModelBenchOptions {
    std::vector<std::string> workloads{"w1", "w2"};
    int rounds = 3;          // A, B pairs for the latency figure
    int queries = 2000;      // batch-1 queries per side and round
    bool batching = true;    // run the W2 QPS search, batching off vs on
    double p99ms = 20;       // the search's bound
    double minSeconds = 2;   // each search probe's minimum duration
    int64_t maxBatch = 64;   // the batching side's max_batch_size
    int64_t timeoutMicros = 1000;  // its batch_timeout_micros
    int clientThreads = 1;
    std::string data = "/usr/share/datasets/fashion-mnist";
};

// 0 when every side ran, 1 otherwise.
int servedModelBench(const ServedModelBenchOptions& options);

}  // namespace trainbench::bench
