#pragma once
// Runs of one configuration that differ only by seed (seedGroupKey), summarised MLPerf's way
// (groupStatistic), with a warm-started group's figures also including its pre-training and the
// from-scratch group it is compared with.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "profiler/grouping/groupstatistic.h"
#include "profiler/tta/runtta.h"

namespace trainbench::profiler {

struct SeedGroup {
    std::string key;               // seedGroupKey; "#<id>" for a run whose config is not JSON
    std::string label;             // what its runs' names share ("fmnist-mlp" of "fmnist-mlp-seed1", ...)
    std::vector<size_t> members;   // indices into the runs grouped, in their order
    int pending = 0;               // running runs not at the target yet: not counted below
    GroupStatistic time;           // over the counted runs' own training
    bool warm_started = false;     // its runs start from another run's checkpoint
    std::optional<GroupStatistic> with_pretraining;  // warm-started: the pre-training added to each run
    std::optional<size_t> from_scratch;              // warm-started: index of the group trained from scratch
};

// Groups in order of first appearance; a running run that has already reached the target counts.
std::vector<SeedGroup> groupBySeed(const std::vector<RunTta>& runs);

// The runs counted in a group's statistics (members minus pending).
std::vector<size_t> countedMembers(const SeedGroup& group, const std::vector<RunTta>& runs);

}  // namespace trainbench::profiler
