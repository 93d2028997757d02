#pragma once
// The order in which each stage of a pipeline runs the forward and backward passes of a step's
// micro-batches (strategy.type "pipeline"):
//   * GPipe (Huang et al. 2019), "fill-drain": every stage runs the M forwards, then the M backwards.
//     A stage holds the activations of all M micro-batches at once.
//   * 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage k runs K-k-1 forwards to fill the pipe,
//     then alternates one forward and one backward, then drains the remaining backwards. It holds at
//     most K-k micro-batches' activations, with the same bubble.
// Either way a step ends with every stage idle for (K-1) of its M+K-1 time slots when the stages
// take equal time: the bubble fraction (K-1)/(M+K-1).
#include <optional>
#include <string_view>
#include <vector>

namespace trainbench::engine {

enum class PipelineSchedule { GPipe, OneFOneB };

// The experiment file's names: "gpipe", "1f1b".
std::string_view pipelineScheduleName(PipelineSchedule s);
std::optional<PipelineSchedule> parsePipelineSchedule(std::string_view name);

struct PipelineOp {
    bool forward = true;
    int micro = 0;  // micro-batch index, 0-based
};

// Each stage's ops for one step, in order: stages x (2 M ops). Every forward of micro-batch m on
// stage k comes after the same on stage k-1; every backward after the same on stage k+1 and after
// its own forward; so the schedule cannot deadlock. stages, micro >= 1.
std::vector<std::vector<PipelineOp>> pipelineOps(PipelineSchedule schedule, int stages, int micro);

// The most micro-batches whose activations stage `stage` holds at once under the schedule: M for
// GPipe, min(M, K - stage) for 1F1B.
int microBatchesInFlight(PipelineSchedule schedule, int stages, int micro, int stage);

// The idle fraction of a step of equal stages: (K-1)/(M+K-1).
double idealBubbleFraction(int stages, int micro);

// One op of a simulated step: which stage ran what, from when to when (seconds from the step's start).
struct PipelineEvent {
    int stage = 0;
    PipelineOp op;
    double start = 0.0, end = 0.0;
};

// A step of the schedule played out in time: each stage runs its ops in order, an op starting once the
// stage is free and its input has arrived (a forward: the previous stage's forward of that micro-batch
// plus `handoffSeconds`; a backward: the next stage's backward plus `handoffSeconds`, and its own forward).
struct PipelineTimeline {
    std::vector<PipelineEvent> events;  // in the order they were placed
    double stepSeconds = 0.0;           // the last op's end
    std::vector<double> busySeconds;    // per stage: the sum of its ops' durations
    // Idle fraction over the stages: 1 - sum(busy) / (K x stepSeconds).
    double bubbleFraction() const;
};

// Plays a step with stage k taking forwardSeconds[k] per micro-batch forward and backwardSeconds[k]
// per backward (vectors of K).
PipelineTimeline simulatePipeline(PipelineSchedule schedule, int stages, int micro, const std::vector<double>& forwardSeconds,
                                  const std::vector<double>& backwardSeconds, double handoffSeconds = 0.0);
// The same with a hand-off time per boundary: handoffSeconds[k] between stage k and k+1 (K-1 of them).
PipelineTimeline simulatePipeline(PipelineSchedule schedule, int stages, int micro, const std::vector<double>& forwardSeconds,
                                  const std::vector<double>& backwardSeconds, const std::vector<double>& handoffSeconds);

}  // namespace trainbench::engine
