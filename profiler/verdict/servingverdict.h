#pragma once
// What bounds a served model under load, from a load test's points (a run of kind serve,
// loadtest_points) and the server's settings: the load generator itself (client-bound), the queue
// (batch timeout or too few instances make up the wait), too little batching (a per-call cost paid
// once per example), JSON (decode and encode), the weights streamed per small batch (memory-bound:
// int8 helps), or the model's compute. Actions are changes to the server's flags — the same names as
// `trainbench-cli serve` (TF Serving's batching parameters) — that `apply` turns into a new load test.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/loadtestpoint.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

enum class ServingBound { Client, Queue, UnderBatched, Serialisation, Memory, Compute, Balanced };
// "client-bound", "queue-bound", "under-batched", "serialisation-bound", "memory-bound", "compute-bound", "balanced"
const char* servingBoundName(ServingBound bound);

// The server as the load test started it (run attributes serve.*); all unset for a URL the load
// test did not start (then no action can be offered but the client's).
struct ServedSettings {
    std::optional<std::string> precision;      // fp32, int8
    std::optional<bool> enable_batching;
    std::optional<int64_t> max_batch_size, batch_timeout_micros, num_batch_threads, instances, threads_per_instance;
    std::optional<int64_t> param_count;        // the model's parameters (runs.param_count)
    int64_t client_threads = 1;
    int host_cores = 1;                        // of the machine it ran on
    int64_t last_level_cache_bytes = 0;        // 0: unknown (the memory rule then uses 1 MiB per core)
};

// A flag of `serve` (and of `loadtest MODEL`) and its new value: {"--batch-timeout-micros", "1000"}.
struct FlagChange {
    std::string flag;
    std::string from;  // "" when the run did not set it
    std::string to;
};

struct ServingAction {
    std::string title;
    std::vector<FlagChange> changes;
    std::string expected;
    std::string rationale;
};

struct ServingVerdict {
    ServingBound bound = ServingBound::Balanced;
    Severity severity = Severity::Low;
    std::string summary;
    std::vector<Evidence> evidence;
    int64_t point = -1;                 // the point judged (-1: none had answers)
    std::vector<ServingAction> actions; // ranked, best first
};

// Thresholds: a part of the mean latency at or above these names the bound.
inline constexpr double kQueueShare = 0.40;
inline constexpr double kSerialisationShare = 0.35;
inline constexpr double kComputeShare = 0.50;

// The point judged is the one with the highest achieved QPS among those without errors (the
// server's capacity as measured), else the last. Pure.
ServingVerdict classifyServing(const std::vector<LoadTestPoint>& points, const ServedSettings& settings);

}  // namespace trainbench::profiler
