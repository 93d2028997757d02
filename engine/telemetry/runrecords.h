#pragma once
// What the trainer reports: one record per step and per evaluation, and a summary at the end.
// The run store (profiler) persists these; the CLI prints them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/telemetry/stepphases.h"
#include "engine/telemetry/stopreason.h"

namespace trainbench::engine {

// What one input-pipeline stage did during one training step (differences of StageStats).
struct InputStageStep {
    std::string stage;     // "read", "map", "shuffle", "batch", "prefetch"
    double seconds = 0.0;  // busy time of the stage's threads during the step
    int64_t items = 0;
    int64_t bytes = 0;
    double fill = -1.0;    // mean queue fill (0..1) sampled during the step; -1 when not sampled
};

// Where one replica's part of a synchronous step went. Of its step phases (exclusive seconds on the
// replica's thread) only those kStepPhases marks perReplica are measured; the others stay 0.
struct ReplicaStep : StepPhaseSeconds {
    int rank = 0;
    int64_t samples = 0;          // its share of the global batch
    double compute_seconds = 0.0; // forward, loss, backward and update: the step minus the time it
                                  // sat blocked on the gradient exchange
    double comm_seconds = 0.0;    // inside collectives moving and summing data (all-reduce), whether
                                  // hidden behind backward or not
    double wait_seconds = 0.0;    // inside collectives waiting for slower replicas to arrive
};

// One update a parameter server applied for an asynchronous step (parameter_server strategy).
struct ParamUpdate {
    int server = 0;          // parameter server index
    int worker = 0;          // the worker that pushed it
    int attempt = 0;         // 0 the first time the step ran; n after n reschedulings
    int64_t staleness = 0;   // updates the server applied between the worker's pull and this push
};

// One training step. Where step_seconds went, and what ran after the step, are its step phases
// (StepPhaseSeconds, engine/telemetry/stepphases.h).
struct StepRecord : StepPhaseSeconds {
    int64_t step = 0;           // 1-based global step
    int64_t epoch = 0;          // 0-based epoch the step belongs to
    double loss = 0.0;          // mean training loss of the batch
    double step_seconds = 0.0;  // wall time of the step: batch assembly, forward, backward, update
    int64_t samples = 0;        // examples in the batch
    double samples_per_second = 0.0;
    double learning_rate = 0.0;
    double wall_seconds = 0.0;  // training wall time since start, evaluations excluded
    std::vector<InputStageStep> input_stages;  // per pipeline stage, during this step
    double comm_seconds = 0.0;  // ReplicaStep::comm_seconds, mean over replicas (0 on one device)
    double wait_seconds = 0.0;  // ReplicaStep::wait_seconds, mean over replicas
    std::vector<ReplicaStep> replicas;  // per replica; empty on one device
    std::vector<ParamUpdate> updates;   // parameter_server: one per server; empty otherwise
};

struct EvalRecord {
    int64_t step = 0;
    int64_t epoch = 0;
    std::string split = "test";
    double loss = 0.0;
    double accuracy = 0.0;
    int64_t samples = 0;
    double eval_seconds = 0.0;  // time the evaluation took
    double wall_seconds = 0.0;  // training wall time (evaluations excluded) when it was taken
};

struct RunSummary {
    int64_t steps = 0;
    int64_t epochs_completed = 0;
    double final_loss = 0.0;
    int64_t evaluations = 0;           // test evaluations run (0: the accuracies below mean nothing)
    double final_accuracy = 0.0;       // last test evaluation
    double best_accuracy = 0.0;
    std::optional<double> time_to_target;  // training seconds until target reached, if it was
    std::optional<int64_t> step_at_target;
    double train_seconds = 0.0;        // training wall time, evaluations excluded
    double eval_seconds = 0.0;         // total evaluation time
    double throughput = 0.0;           // training samples/s in steady state (first 20 steps skipped)
    std::optional<StopReason> stop_reason;  // unset until training ends
    double input_seconds = 0.0;        // total input wait over the run
    int64_t skipped_records = 0;       // corrupt records skipped (data.pipeline.skip_corrupt)
    double comm_seconds = 0.0;         // total of StepRecord::comm_seconds
    double wait_seconds = 0.0;         // total of StepRecord::wait_seconds
    // On emulated devices the seconds above are the virtual clock's; this is the host's own training
    // wall time (0: the run was on the wall clock).
    double host_seconds = 0.0;
};

}  // namespace trainbench::engine
