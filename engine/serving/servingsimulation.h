#pragma once
// The dynamic batcher of engine/serving/batchscheduler.h, replayed on a virtual clock: Poisson
// arrivals at a target QPS (MLPerf's Server scenario), TensorFlow Serving's batching policy with
// the same parameters and meanings (requests join the open batch until it is full; a free instance
// takes the oldest batch once it is closed or its first request has waited batch_timeout_micros;
// at most max_enqueued_batches wait, beyond that a request is refused), and a model whose batch of
// n examples takes batchSeconds(padded n) on an instance. What a configuration would give on a
// device that is not here — latency percentiles, throughput, batch sizes, refusals — from the
// device's estimated latency per batch size (engine/emulation/inferenceestimate.h). trainbench-cli
// plan-serving ranks configurations with it.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/serving/batchingparameters.h"

namespace trainbench::engine::serving {

struct ServingSimulation {
    double qps = 100.0;                  // Poisson arrivals, one example per query
    int64_t queries = 20000;
    uint64_t seed = 1;
    int64_t instances = 1;               // model instances, each on a device of its own
    BatchingParameters batching;         // num_batch_threads is ignored: one thread per instance
    std::function<double(int64_t)> batchSeconds;  // a batch of n examples (n as padded) on one instance
    double request_overhead_seconds = 0.0;        // per query outside the batch: network, (de)serialisation
};

struct ServingSimResult {
    int64_t completed = 0;
    int64_t refused = 0;                 // max_enqueued_batches reached on arrival (TF Serving: 503)
    double p50 = 0.0, p90 = 0.0, p99 = 0.0, mean = 0.0;  // seconds from arrival to answer
    double achieved_qps = 0.0;           // completed / (last answer - first arrival)
    double mean_batch = 0.0;             // examples per batch run
    double utilisation = 0.0;            // busy time of the instances / (instances x span)
};

// std::invalid_argument for a configuration that cannot run (no batchSeconds, qps <= 0,
// instances < 1, batching parameters that BatchingParameters::validate() refuses).
ServingSimResult simulateServing(const ServingSimulation& sim);

}  // namespace trainbench::engine::serving
