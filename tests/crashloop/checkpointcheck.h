#pragma once
// The crash loop's checks of the checkpoint after a kill: the file under the checkpoint's name is
// the one seen at the last check (byte for byte) or a whole new one of a run started since, every
// CRC valid (the engine's own reader); and the folders of the store and the checkpoint hold only
// what belongs there (temporary files a killed writer left are counted).
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/store/runrow.h"
#include "tests/crashloop/crashreport.h"
#include "tests/crashloop/crashstate.h"

namespace trainbench::crashloop {

struct CheckpointRules {
    std::string path;
    int64_t everySteps = 0;  // train.checkpoint_every_steps of the loop's runs
};

// Sets after.checkpoint. newRuns and plannedSteps: the runs started since the last check and their
// plan.total_steps (StoreFacts).
void checkCheckpoint(const CheckpointRules& rules, const std::vector<profiler::RunRow>& newRuns,
                     const std::vector<int64_t>& plannedSteps, const CrashState& before, CrashState& after,
                     CrashReport& report);

// Temporary files ("<checkpoint>.tmp.<pid>.<n>") left in the checkpoint's folder, by pid.
struct Leftovers {
    std::vector<int64_t> pids;
    uint64_t bytes = 0;
};

// Lists the folders of the store and of the checkpoint; anything but the store's files (db, -wal,
// -shm, -journal), the checkpoint and its leftover temporary files is a violation.
Leftovers checkFolders(const std::string& db, const std::string& checkpoint, CrashReport& report);

}  // namespace trainbench::crashloop
