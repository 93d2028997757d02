#pragma once
// One point of the scaling sweep (workload x mode x workers) and what its run gave.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/runrow.h"

namespace trainbench::bench {

struct Workload {
    std::string id;          // "w1"
    std::string experiment;  // file name in experiments/
    std::string title;       // "W1 fmnist-mlp"
    int64_t batch = 128;     // the workload's batch: samples per update on one device
    int64_t trainExamples = 60000;
};

const std::vector<Workload>& standardWorkloads();

enum class Mode {
    Single,  // strategy single: one process, `threads` threads — the 1-device baseline
    Sync,    // strategy multi_worker: N processes, Gloo ring all-reduce, one update per global batch
    Async,   // strategy parameter_server: N workers, K parameter servers, an update per worker step
    SyncMpi,   // strategy multi_worker with strategy.collective mpi: N processes under mpirun, Open MPI all-reduce
    Mirrored,  // strategy mirrored: N replicas as threads of one process, shared-memory all-reduce
};

const char* modeName(Mode mode);
std::optional<Mode> parseMode(const std::string& text);

struct SweepPoint {
    const Workload* workload = nullptr;
    Mode mode = Mode::Single;
    int workers = 1;
    int threads = 1;   // per worker
    int servers = 0;   // parameter servers (async)
    // Samples one worker computes per step: batch / N for sync (the global batch is split) and,
    // by default, for async too, so both modes do the same work per worker and step.
    int64_t workerBatch = 128;

    std::string runName(bool quick) const;  // "w1-sync-2", "w1-sync-2-quick"
    // Threads of the processes that compute: workers x threads, plus the parameter servers, which
    // apply every update.
    int busyThreads() const { return workers * threads + (mode == Mode::Async ? servers : 0); }
    // "128", "2x64" (one update on the global batch), "64" (async: one worker's batch per update).
    std::string batchLabel() const;
};

// The `trainbench-cli run` overrides that make the point: strategy, batch, threads, name, budget.
struct RunBudget {
    bool quick = false;
    int quickSteps = 200;
    int maxEpochs = 10;
};
std::vector<std::string> runOverrides(const SweepPoint& point, const RunBudget& budget);

// One run of a point, as the CLI and the store report it.
struct RunOutcome {
    int exitCode = 0;
    std::string problem;  // why it failed or why nothing was recorded (the CLI's last error line)
    std::optional<profiler::RunRow> run;
    int64_t samples = 0;                     // training samples over the run (steps.samples)
    std::optional<int64_t> samplesAtTarget;  // training samples up to the step that reached it
    // Per worker, mean over workers: time computing (replica_steps.compute_seconds: the step minus
    // the time blocked in the gradient exchange); on one device the training time minus input wait.
    std::optional<double> computeSeconds;
    std::optional<double> stalenessMean, stalenessP95;  // async: ps.staleness_* run attributes
    double wallSeconds = 0.0, cpuSeconds = 0.0, othersCpus = 0.0;

    bool completed() const;
};

}  // namespace trainbench::bench
