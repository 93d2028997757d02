#pragma once
// The rules that read the step breakdown (rules 2 and 3 in rules.h, and the overhead finding):
// input wait, the exposed gradient exchange, and step time outside the measured ops.
#include <optional>

#include "profiler/verdict/breakdown.h"
#include "profiler/verdict/decide.h"
#include "profiler/verdict/roofline.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

// Input-bound at >= 5 % (moderate) or >= 20 % (high); nothing below.
std::optional<Finding> inputFinding(const StepTotals& t);
// Communication-bound at >= 20 % (moderate) or >= 40 % (high); nothing below.
// With `pipeline`, the blocked time is the stages waiting on one another: pipeline-bubble-bound when
// it is about the schedule's bubble (K-1)/(M+K-1), stage-imbalanced when it is 10 points or more above.
// With `tensorDevices`, it is the tensor-parallel devices' all-reduces of activations and their
// gradients: tensor-communication-bound.
std::optional<Finding> commFinding(const StepTotals& t, const std::optional<PipelineShape>& pipeline = std::nullopt,
                                   const std::optional<int>& tensorDevices = std::nullopt);
// Step time outside the measured ops >= 30 %: kind compute (whole run only). Needs op stats and
// phases (both zero when profiling is compiled out). On an emulated device (`emulated`) the time
// outside the ops is the device's own per-step overhead, and the evidence says so.
std::optional<Finding> overheadFinding(const StepTotals& all_steps, const OpMix& mix, bool emulated);

// Evidence every finding of a window carries: input and communication fractions, mean step time.
std::vector<Evidence> windowEvidence(const StepTotals& t);

}  // namespace trainbench::profiler
