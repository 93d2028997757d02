#pragma once
// What a warm-started run's starting point cost: the source run's training up to the checkpoint it
// started from (runs.warm_start_run; run attribute warm_start.step, absent = the source's last step).
#include <cstdint>
#include <optional>
#include <string>

#include "profiler/store/runid.h"

namespace trainbench::profiler {

class RunStore;
struct RunRow;

struct Pretraining {
    RunId source;
    std::optional<int64_t> step;     // the checkpoint's step; nullopt when the source is gone
    std::optional<double> seconds;   // the source's training seconds up to it, on its clock
    std::optional<double> cost;      // seconds x the source's price per second; nullopt without a price
    std::string problem;             // why seconds is unknown ("run 7 is not in the store")
};

// nullopt for a run trained from scratch.
std::optional<Pretraining> pretrainingOf(RunStore& store, const RunRow& run);

}  // namespace trainbench::profiler
