#pragma once
// The crash loop's checks of the run store after a kill: the file is intact (PRAGMA
// integrity_check, foreign keys), every run reads back through the product's own read path
// (RunStore::listRuns, which marks dead writers' runs interrupted) as completed or interrupted and
// is stored so, steps run contiguously from the first, evaluations and per-step rows belong to
// recorded steps, and no run checked before has lost or changed anything.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/runrow.h"
#include "tests/crashloop/crashreport.h"
#include "tests/crashloop/crashstate.h"

namespace trainbench::crashloop {

struct StoreFacts {
    // The runs started since the last check (id > before.lastRun), as the product lists them.
    std::vector<profiler::RunRow> newRuns;
    // Their status in the file before the product read it ("running" for a killed writer).
    std::vector<std::string> rawStatusBefore;
    // Their plan.total_steps (0 when not recorded): where a checkpoint at the end is taken.
    std::vector<int64_t> plannedSteps;
};

// `after` receives the runs and newest id seen now (the checkpoint part is left as it is).
StoreFacts checkStore(const std::string& db, const CrashState& before, CrashState& after, CrashReport& report);

}  // namespace trainbench::crashloop
