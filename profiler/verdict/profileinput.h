#pragma once
// Everything the bottleneck classifier looks at for one run: the per-step breakdown, the per-op
// statistics, the machine's roofs, the memory footprint, and what the experiment was. The run store
// reads it back for any stored run (RunStore::profileInput), so classification is a pure function.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/instrument/opstats.h"
#include "engine/strategy/strategykind.h"
#include "profiler/machine/machineinfo.h"
#include "profiler/verdict/stepsample.h"

namespace trainbench::profiler {

struct ProfileInput {
    std::vector<StepSample> steps;          // in step order
    std::vector<engine::prof::OpRow> ops;   // per kind and shape, over the run's steps from
                                            // ops_first_step on (the measuring process's warm-up left out)
    int64_t ops_first_step = 0;             // (attribute ops.first_step; 0: every step the process ran)
    std::optional<MachineRoofs> roofs;      // absent: not calibrated (no roofline verdicts)
    std::optional<MemoryFootprint> memory;  // absent: not recorded
    nlohmann::json experiment;              // the run's resolved experiment (runs.config_json)
    engine::StrategyKind strategy = engine::StrategyKind::Single;  // the run's, read from the store
    int replicas = 1;
    int threads = 0;                        // compute threads per replica (0: unknown)
    int host_cores = 0;                     // logical cores of the host the run used (0: unknown);
                                            // recorded, because classify() must not ask the machine
                                            // it happens to run on
};

}  // namespace trainbench::profiler
