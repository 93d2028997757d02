#pragma once
// The timeline: the run cut into windows of steps, each classified on its own (a run can change
// verdict, e.g. input-bound until the page cache is warm, compute-bound after).
#include <vector>

#include "profiler/verdict/decide.h"
#include "profiler/verdict/profileinput.h"

namespace trainbench::profiler {

// About 20 windows of at least 10 steps over all steps (warm-up included), adjacent windows of
// the same kind and severity merged. Each finding carries the window's input and communication
// fractions and mean step time as evidence.
std::vector<Finding> timeline(const std::vector<StepSample>& steps, const RunFacts& facts);

}  // namespace trainbench::profiler
