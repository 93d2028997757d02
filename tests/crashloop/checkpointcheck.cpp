#include "tests/crashloop/checkpointcheck.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "app/run/checkpointmetadata.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/data/records/crc32c.h"
#include "engine/io/tempfiles.h"
#include "engine/util/errors.h"

namespace trainbench::crashloop {

namespace fs = std::filesystem;

namespace {

CheckpointPrint fingerprint(const engine::Checkpoint& c) {
    std::ifstream in(c.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CheckpointPrint p;
    p.bytes = bytes.size();
    p.crc = engine::crc32c(bytes.data(), bytes.size());
    p.run = app::runIdFromMetadata(c);
    p.step = app::progressFromMetadata(c).step;
    return p;
}

// A checkpoint a run may have written: every `every` steps, or at its end (its last step, or the
// planned last one when it was killed before it recorded its end).
bool stepFits(const CheckpointPrint& p, const profiler::RunRow& run, int64_t planned, int64_t every) {
    if (p.step < 1) return false;
    if (every > 0 && p.step % every == 0) return true;
    return p.step == planned || (run.steps && *run.steps == p.step);
}

}  // namespace

void checkCheckpoint(const CheckpointRules& rules, const std::vector<profiler::RunRow>& newRuns,
                     const std::vector<int64_t>& plannedSteps, const CrashState& before, CrashState& after,
                     CrashReport& report) {
    after.checkpoint = before.checkpoint;
    if (!fs::exists(rules.path)) {
        if (before.checkpoint)
            report.violation(rules.path + ": the checkpoint (" + describe(*before.checkpoint) + ") is gone");
        report.fact("checkpoint", "none");
        return;
    }
    CheckpointPrint now;
    try {
        const engine::Checkpoint c = engine::Checkpoint::read(rules.path);
        for (const char* shard : {"params", "model.layout"})
            if (!c.has(shard)) report.violation(rules.path + ": checkpoint without its '" + shard + "' shard");
        now = fingerprint(c);
    } catch (const engine::CheckpointError& e) {
        report.violation("the checkpoint is neither the old nor a whole new one: " + std::string(e.what()));
        after.checkpoint.reset();
        return;
    }
    after.checkpoint = now;
    if (before.checkpoint && now == *before.checkpoint) {
        report.fact("checkpoint", "old (" + describe(now) + ")");
        return;
    }
    const profiler::RunRow* owner = nullptr;
    int64_t planned = 0;
    for (size_t i = 0; i < newRuns.size(); ++i)
        if (newRuns[i].id.value == now.run) {
            owner = &newRuns[i];
            planned = plannedSteps[i];
        }
    if (!owner) {
        report.violation(rules.path + ": the checkpoint changed (" +
                         (before.checkpoint ? describe(*before.checkpoint) : std::string("none")) + " -> " +
                         describe(now) + ") but run " + std::to_string(now.run) + " did not run since the last check");
    } else if (!stepFits(now, *owner, planned, rules.everySteps)) {
        report.violation(rules.path + ": new checkpoint of run " + std::to_string(now.run) + " at step " +
                         std::to_string(now.step) + ", which is neither a multiple of " +
                         std::to_string(rules.everySteps) + " nor the run's last step");
    }
    report.fact("checkpoint", "new (" + describe(now) + ")");
}

Leftovers checkFolders(const std::string& db, const std::string& checkpoint, CrashReport& report) {
    const fs::path dbPath = fs::absolute(db), checkpointPath = fs::absolute(checkpoint);
    const std::string dbName = dbPath.filename().string(), checkpointName = checkpointPath.filename().string();
    Leftovers left;
    std::vector<fs::path> folders{dbPath.parent_path()};
    if (checkpointPath.parent_path() != dbPath.parent_path()) folders.push_back(checkpointPath.parent_path());
    for (const fs::path& folder : folders) {
        std::error_code ec;
        for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
            const std::string name = entry.path().filename().string();
            if (name == dbName || name == dbName + "-wal" || name == dbName + "-shm" || name == dbName + "-journal" ||
                name == checkpointName)
                continue;
            // The atomic writer's named temporary file (engine/io/tempfiles.h) of the checkpoint.
            pid_t pid = 0;
            if (engine::isTempFileName(name, &pid) && name.rfind("." + checkpointName + ".", 0) == 0) {
                left.pids.push_back(pid);
                left.bytes += entry.is_regular_file() ? entry.file_size() : 0;
                continue;
            }
            report.violation(entry.path().string() + ": unexpected file next to the store or the checkpoint");
        }
    }
    return left;
}

}  // namespace trainbench::crashloop
