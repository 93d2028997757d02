#pragma once
// The step phases, declared once: where a training step's time went (and what ran between two
// steps). Each row names its instrumentation phase, the record field, the run store's column (which
// is also the CSV header), the words users read and the report's colour. The record structs, the
// store's INSERT and SELECT, the CSV export, the report, the GUI's breakdown chart and compare
// table all iterate this table; what cannot (the instrumentation's enum, the migrations) is checked
// against it, here or in tests/profiler/test_stepphases.cpp. docs/architecture.md lists the files a
// new phase touches.
#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

#include "engine/instrument/instrument.h"

namespace trainbench::engine {

// Seconds per phase. The breakdown of a step in a StepRecord (and its read-side copies), of a
// replica's part in a ReplicaStep, and sums of them in the verdict.
struct StepPhaseSeconds {
    // Exclusive seconds on the training thread (replica 0 of a mirrored run; a ReplicaStep's on its
    // replica's thread); in a StepRecord these six add up to step_seconds. Zero when profiling is
    // compiled out, except input and other.
    double input_seconds = 0.0;         // waiting for the batch (input wait)
    double forward_seconds = 0.0;       // forward pass and loss
    double backward_seconds = 0.0;      // backward pass, optimizer updates inside it excluded
    double optimizer_seconds = 0.0;     // optimizer updates
    double exposed_comm_seconds = 0.0;  // blocked on the gradient exchange (moving data, waiting for peers)
    double other_seconds = 0.0;         // the rest: bookkeeping, handing work to a worker
    double output_seconds = 0.0;        // a prediction run: writing the batch's predictions (0 in training)
    // What ran after the step and before the next one (not in step_seconds).
    double eval_seconds = 0.0;          // a test-set evaluation
    double checkpoint_seconds = 0.0;    // a checkpoint
};

struct StepPhase {
    prof::Phase phase;                  // the instrumentation's phase (TB_PHASE, PhaseScope)
    double StepPhaseSeconds::*seconds;  // the record field
    std::string_view column;            // steps (and replica_steps) column; the CSV header
    std::string_view name;              // the GUI's breakdown category (its colour key), the trace zone,
                                        // `trainbench-cli profile`
    std::string_view reportName;        // the report's breakdown charts
    std::string_view compareName;       // the GUI's compare table
    std::string_view description;       // the compare table's tooltip
    int colour;                         // the report's palette index (profiler/report/svgchart.cpp); -1:
                                        // not in the report's charts, which show the in-step phases
    bool inStep;                        // part of step_seconds (evaluation and checkpoint come after it)
    bool perReplica;                    // measured per replica too (ReplicaStep, replica_steps); the
                                        // other fields of a ReplicaStep stay 0
};

// In-step phases first (they add up to step_seconds), input first of all: its column has been the
// steps table's since schema 1, beside step_seconds; the others follow in the order their columns
// were added, which is the order of the CSV export.
inline constexpr std::array<StepPhase, 9> kStepPhases{{
    {prof::Phase::Input, &StepPhaseSeconds::input_seconds, "input_seconds", "input", "input", "input wait",
     "Waiting for the batch", 4, true, false},
    {prof::Phase::Forward, &StepPhaseSeconds::forward_seconds, "forward_seconds", "forward", "forward", "forward",
     "Forward pass and loss", 5, true, true},
    {prof::Phase::Backward, &StepPhaseSeconds::backward_seconds, "backward_seconds", "backward", "backward",
     "backward", "Backward pass", 0, true, true},
    {prof::Phase::Optimizer, &StepPhaseSeconds::optimizer_seconds, "optimizer_seconds", "optimizer", "optimizer",
     "optimizer", "Parameter updates", 2, true, true},
    {prof::Phase::Communication, &StepPhaseSeconds::exposed_comm_seconds, "exposed_comm_seconds", "communication",
     "exposed communication", "communication", "Blocked on the gradient exchange", 1, true, true},
    {prof::Phase::Other, &StepPhaseSeconds::other_seconds, "other_seconds", "other", "other", "other",
     "Bookkeeping, handing work to workers", 6, true, false},
    {prof::Phase::Output, &StepPhaseSeconds::output_seconds, "output_seconds", "output", "output", "output",
     "Writing the batch's predictions (prediction runs)", 3, true, false},
    {prof::Phase::Evaluation, &StepPhaseSeconds::eval_seconds, "eval_seconds", "evaluation", "evaluation",
     "evaluation", "Test-set evaluation after the step", -1, false, false},
    {prof::Phase::Checkpoint, &StepPhaseSeconds::checkpoint_seconds, "checkpoint_seconds", "checkpoint",
     "checkpoint", "checkpoint", "Checkpoint written after the step", -1, false, false},
}};

inline constexpr size_t kInStepPhaseCount = [] {
    size_t n = 0;
    for (const StepPhase& p : kStepPhases) n += p.inStep ? 1 : 0;
    return n;
}();
inline constexpr size_t kPerReplicaPhaseCount = [] {
    size_t n = 0;
    for (const StepPhase& p : kStepPhases) n += p.perReplica ? 1 : 0;
    return n;
}();
// The phases that add up to step_seconds, in table order.
inline constexpr std::span<const StepPhase, kInStepPhaseCount> kInStepPhases =
    std::span(kStepPhases).first<kInStepPhaseCount>();

// f(std::integral_constant<size_t, i>) for each row i of kStepPhases, unrolled at compile time (the
// store's step INSERT runs it on every step: kStepPhases[i].seconds is then a constant).
template <class F>
constexpr void forEachStepPhase(F&& f) {
    [&]<size_t... I>(std::index_sequence<I...>) {
        (f(std::integral_constant<size_t, I>{}), ...);
    }(std::make_index_sequence<kStepPhases.size()>{});
}

namespace stepphases_check {
constexpr bool eachOnce() {
    for (size_t i = 0; i < kStepPhases.size(); ++i) {
        for (size_t j = i + 1; j < kStepPhases.size(); ++j) {
            const StepPhase &a = kStepPhases[i], &b = kStepPhases[j];
            if (a.phase == b.phase || a.seconds == b.seconds || a.column == b.column || a.name == b.name) return false;
        }
    }
    return true;
}
constexpr bool inStepFirst() {
    for (size_t i = 0; i < kStepPhases.size(); ++i)
        if (kStepPhases[i].inStep != (i < kInStepPhaseCount)) return false;
    return true;
}
constexpr bool namesAreTheZones() {
    for (const StepPhase& p : kStepPhases)
        if (p.name != prof::detail::phaseZoneName(p.phase)) return false;
    return true;
}
}  // namespace stepphases_check

// Every field of StepPhaseSeconds and every instrumentation phase has exactly one row.
static_assert(sizeof(StepPhaseSeconds) == kStepPhases.size() * sizeof(double),
              "a field of StepPhaseSeconds has no row in kStepPhases");
static_assert(kStepPhases.size() == static_cast<size_t>(prof::kPhaseCount),
              "a prof::Phase has no row in kStepPhases");
static_assert(stepphases_check::eachOnce(), "two rows of kStepPhases share a phase, field, column or name");
static_assert(stepphases_check::inStepFirst(), "the in-step phases come first in kStepPhases");
static_assert(kStepPhases.front().phase == prof::Phase::Input, "input is the first phase (see above)");
static_assert(stepphases_check::namesAreTheZones(), "a phase's name differs from its trace zone's");

}  // namespace trainbench::engine
