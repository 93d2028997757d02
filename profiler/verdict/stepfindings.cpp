// Findings from the step breakdown (see stepfindings.h and rules.h).
#include "profiler/verdict/stepfindings.h"

#include <algorithm>
#include <string>

#include "profiler/verdict/evidencetext.h"
#include "profiler/verdict/rules.h"

namespace trainbench::profiler {

namespace {

Evidence inputEvidence(const StepTotals& t) {
    return text::percentEvidence("input_fraction", t.inputFraction(),
                                 text::percent(t.inputFraction()) +
                                     " % of step time waiting for input (TensorFlow Profiler: >= 5 % is moderately, "
                                     ">= 20 % highly input-bound)");
}

Evidence commEvidence(const StepTotals& t) {
    return text::percentEvidence("comm_fraction", t.commFraction(),
                                 text::percent(t.commFraction()) +
                                     " % of step time blocked on communication between devices: moving data or "
                                     "waiting for peers in a gradient exchange, a pipeline stage's hand-offs or "
                                     "tensor-parallel all-reduces (>= 20 % is communication-bound)");
}

Evidence meanStepEvidence(const StepTotals& t) {
    return {"step_ms", t.meanStepMs(), "ms",
            text::fixed(t.meanStepMs(), 2) + " ms per step on average over steps " + std::to_string(t.first_step) + "-" +
                std::to_string(t.last_step)};
}

}  // namespace

std::optional<Finding> inputFinding(const StepTotals& t) {
    const double input = t.inputFraction();
    if (!rules::reaches(input, kInputModerate)) return std::nullopt;
    Finding f;
    f.kind = BoundKind::Input;
    const bool high = rules::reaches(input, kInputHigh);
    f.severity = high ? Severity::High : Severity::Moderate;
    f.summary = std::string(high ? "Highly" : "Moderately") + " input-bound: " + text::percent(input) +
                " % of step time waiting for input";
    f.evidence.push_back(inputEvidence(t));
    const double perStep = t.count > 0 ? t.input_seconds / static_cast<double>(t.count) * 1e3 : 0.0;
    f.evidence.push_back({"input_ms", perStep, "ms",
                          text::fixed(perStep, 2) + " ms of input wait per step, of " + text::fixed(t.meanStepMs(), 2) +
                              " ms"});
    return f;
}

namespace {

std::optional<Finding> pipelineFinding(const StepTotals& t, const PipelineShape& p) {
    const double idle = t.commFraction(), ideal = p.idealBubble();
    Finding f;
    f.kind = BoundKind::Communication;
    f.severity = rules::reaches(idle, rules::kCommHigh) ? Severity::High : Severity::Moderate;
    const std::string shape = std::to_string(p.stages) + " stages and " + std::to_string(p.micro) + " micro-batches";
    if (idle >= ideal + 0.10)
        f.summary = "Stage-imbalanced: " + text::percent(idle) + " % of step time the first stage waits on the others, "
                    "where the schedule's bubble with " + shape + " is " + text::percent(ideal) + " %";
    else
        f.summary = "Pipeline-bubble-bound: " + text::percent(idle) + " % of step time the first stage waits on the "
                    "others; the schedule's bubble with " + shape + " is " + text::percent(ideal) + " %";
    f.evidence.push_back(text::percentEvidence(
        "bubble_fraction", idle,
        text::percent(idle) + " % of step time the first stage was blocked on a hand-off from its neighbour or done "
                              "before the last stage (>= 20 % is reported)"));
    f.evidence.push_back(text::percentEvidence(
        "ideal_bubble_fraction", ideal,
        text::percent(ideal) + " % is (K-1)/(M+K-1) for K = " + std::to_string(p.stages) + " equal stages and M = " +
            std::to_string(p.micro) + " micro-batches (GPipe, 1F1B alike)"));
    if (t.wait > 0)
        f.evidence.push_back(text::percentEvidence(
            "stage_idle_fraction", t.of(t.wait),
            text::percent(t.of(t.wait)) + " % of step time (mean over the stages) idle"));
    return f;
}

}  // namespace

namespace {

// What a communication finding says, by what the ranks exchange.
struct CommWords {
    std::string summary;     // after the percentage: " % of step time ..."
    std::string collective;  // after the percentage of collective_fraction
    std::string waiting;     // after the percentage of peer_wait_fraction
};

Finding exchangeFinding(const StepTotals& t, double comm, const std::string& title, const CommWords& words) {
    Finding f;
    f.kind = BoundKind::Communication;
    f.severity = rules::reaches(comm, rules::kCommHigh) ? Severity::High : Severity::Moderate;
    f.summary = title + ": " + text::percent(comm) + words.summary;
    f.evidence.push_back(commEvidence(t));
    if (t.comm > 0)
        f.evidence.push_back(
            text::percentEvidence("collective_fraction", t.of(t.comm), text::percent(t.of(t.comm)) + words.collective));
    if (t.wait > 0)
        f.evidence.push_back(
            text::percentEvidence("peer_wait_fraction", t.of(t.wait), text::percent(t.of(t.wait)) + words.waiting));
    return f;
}

}  // namespace

std::optional<Finding> commFinding(const StepTotals& t, const std::optional<PipelineShape>& pipeline,
                                   const std::optional<int>& tensorDevices) {
    const double comm = t.commFraction();
    if (!rules::reaches(comm, kCommBound)) return std::nullopt;
    if (pipeline) return pipelineFinding(t, *pipeline);
    if (tensorDevices)
        return exchangeFinding(
            t, comm, "Tensor-communication-bound",
            {" % of step time in the all-reduces of activations and their gradients between the " +
                 std::to_string(*tensorDevices) + " tensor-parallel devices",
             " % of step time (mean over the devices) summing and copying activations in the all-reduces (one per "
             "split layer pair, forward and backward)",
             " % of step time (mean over the devices) waiting for the other devices at an all-reduce"});
    return exchangeFinding(t, comm, "Communication-bound",
                           {" % of step time blocked on the gradient exchange",
                            " % of step time (mean over replicas) inside collectives moving data, hidden behind "
                            "backward or not",
                            " % of step time (mean over replicas) waiting for slower replicas"});
}

std::optional<Finding> overheadFinding(const StepTotals& all, const OpMix& mix, bool emulated) {
    if (mix.op_seconds <= 0 || all.compute() <= 0 || all.step <= 0) return std::nullopt;
    const double outside = std::max(0.0, all.compute() - mix.op_seconds_per_replica) + all.other_seconds;
    const double share = all.of(outside);
    if (!rules::reaches(share, rules::kOverheadFinding)) return std::nullopt;
    Finding f;
    f.kind = BoundKind::Compute;
    f.severity = rules::reaches(share, rules::kOverheadHigh) ? Severity::High : Severity::Moderate;
    f.summary = "Overhead: " + text::percent(share) + " % of step time outside the measured ops";
    f.evidence.push_back(text::percentEvidence(
        "outside_ops_fraction", share,
        text::percent(share) +
            (emulated ? " % of step time outside the ops: the emulated device's fixed costs per step (host, infeed "
                        "and synchronisation, overheads.per_step_us in the device catalog), not arithmetic"
                      : " % of step time outside the measured ops (forward, backward and optimizer time the "
                        "ops do not account for, plus bookkeeping): framework overhead, not arithmetic")));
    f.evidence.push_back(text::percentEvidence(
        "other_fraction", all.of(all.other_seconds),
        text::percent(all.of(all.other_seconds)) +
            (emulated ? " % of step time in the device's per-step overhead (overheads.per_step_us)"
                      : " % of step time in bookkeeping outside the step's phases")));
    f.first_step = all.first_step;
    f.last_step = all.last_step;
    return f;
}

std::vector<Evidence> windowEvidence(const StepTotals& t) {
    return {inputEvidence(t), commEvidence(t), meanStepEvidence(t)};
}

}  // namespace trainbench::profiler
