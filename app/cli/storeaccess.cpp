#include "app/cli/storeaccess.h"

#include <cstdio>
#include <filesystem>

#include "app/run/exitcodes.h"
#include "profiler/store/storeerror.h"

namespace trainbench::cli {

std::optional<profiler::RunStore> openExisting(const std::string& db, int& exitCode, bool emptyIsOk) {
    if (!std::filesystem::exists(db)) {
        if (emptyIsOk) {
            std::printf("no runs yet: %s does not exist (trainbench-cli run experiments/fmnist-mlp.json creates it)\n",
                        db.c_str());
            exitCode = kExitOk;
        } else {
            std::fprintf(stderr, "no run store at %s\n", db.c_str());
            exitCode = kExitStore;
        }
        return std::nullopt;
    }
    try {
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        if (store.schemaVersion() > profiler::RunStore::latestSchemaVersion())
            std::fprintf(stderr, "note: %s\n", store.readOnlyReason().c_str());
        return store;
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        exitCode = kExitStore;
        return std::nullopt;
    }
}

void keepVerdict(const profiler::RunStore& store, profiler::RunId id, const profiler::Verdict& verdict) {
    if (store.schemaVersion() != profiler::RunStore::latestSchemaVersion()) return;
    try {
        auto writable = profiler::RunStore::open(store.path(), profiler::OpenMode::ReadWrite);
        if (!writable.readOnly()) writable.saveVerdict(id, verdict);
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "note: the verdict was not stored: %s\n", e.what());
    }
}

std::optional<profiler::RunRow> findOrComplain(profiler::RunStore& store, const std::string& run, int& exitCode) {
    auto row = store.findRun(run);
    if (!row) {
        std::fprintf(stderr, "no run '%s' in %s (trainbench-cli runs lists them)\n", run.c_str(), store.path().c_str());
        exitCode = kExitNotFound;
    }
    return row;
}

}  // namespace trainbench::cli
