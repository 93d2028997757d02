#pragma once
// The configurations `trainbench-cli plan` and the Plan page rank: every seed group of the runs
// read, or with a sweep each of its points — its seed group when it has runs, else a projection:
// the steps to target of the runs with the same numerics x the point's estimated step time.
#include <vector>

#include "app/plan/pointestimate.h"
#include "profiler/plan/plancandidate.h"
#include "profiler/grouping/seedgroup.h"

namespace trainbench::app {

struct CandidateOptions {
    // Rank warm-started groups by their time and cost including the pre-training.
    bool with_pretraining = false;
};

std::vector<profiler::PlanCandidate> groupCandidates(const std::vector<profiler::RunTta>& runs,
                                                     const std::vector<profiler::SeedGroup>& groups,
                                                     CandidateOptions options = {});

std::vector<profiler::PlanCandidate> sweepCandidates(const std::vector<PointEstimate>& points,
                                                     const std::vector<profiler::RunTta>& runs,
                                                     const std::vector<profiler::SeedGroup>& groups,
                                                     CandidateOptions options = {});

}  // namespace trainbench::app
