#pragma once
// Runs one experiment in this process: loads the data, builds the model, trains, and records every
// step and evaluation in the run store. `trainbench-cli run` is a thin shell around it.
#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "app/experiment/experiment.h"
#include "engine/strategy/clusterspec.h"
#include "engine/telemetry/runrecords.h"
#include "engine/train/trainobserver.h"
#include "profiler/store/runid.h"
#include "profiler/store/runstatus.h"

namespace trainbench::app {

struct RunRequest {
    Experiment experiment;
    std::string dbPath;
    const std::atomic<bool>* stop = nullptr;   // set (e.g. by SIGINT) to end the run as 'stopped'
    engine::TrainObserver* observer = nullptr; // optional progress display
    std::function<void(const std::string&)> log;  // optional: one-line messages before training
    // multi_worker: this process's task of the job (TF_CONFIG) and the job's token. The chief (rank 0)
    // serves the rendezvous store and records the run; the other ranks record nothing themselves.
    std::optional<engine::ClusterSpec> cluster;
    std::string jobToken;
    // Continue the run saved in train.checkpoint_path (a restarted job): same run id, parameters,
    // optimizer state, position in the data and totals. `restarts` is recorded with the run.
    bool resume = false;
    int restarts = 0;
    // --trace: a Chrome trace of training steps [traceFirst, traceLast] written to tracePath (a task
    // of a multi_worker job writes tracePath.rank<N>; the launcher merges them).
    std::string tracePath;
    int64_t traceFirst = 21;
    int64_t traceLast = 30;
};

struct RunOutcome {
    profiler::RunId id;  // 0 on a multi_worker task other than the chief
    profiler::RunStatus status = profiler::RunStatus::Failed;
    engine::RunSummary summary;
    std::string message;  // why it failed, when it did (or stopped; or what output could not be written)
    // An output the run was asked for and could not write (--trace onto a full disk): the run itself
    // is complete and recorded; the error is in message too.
    std::string outputError;
    std::string verdict;  // what bounds the run, one line (the chief's process only)
};

// Throws profiler::StoreError when the store cannot be written at all (no run is created then).
// Errors after the run row exists (bad data, a model that does not fit) end the run as 'failed'
// with the message, and are reported in the outcome rather than thrown.
RunOutcome runExperiment(const RunRequest& request);

}  // namespace trainbench::app
