#pragma once
// Opening the run store and finding a run for the commands that read it (runs, show, export,
// profile, report, plan, tta, apply), with the same messages and exit codes everywhere. They open
// it read-only: reading never migrates a store or marks its dead runs (they are shown interrupted).
#include <optional>
#include <string>

#include "profiler/store/runstore.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::cli {

// Opens an existing store read-only; nullopt (with a message printed and exitCode set) when there
// is none or it is unusable. emptyIsOk: a missing file is "no runs yet" (exit 0) rather than an
// error. A store of an older schema is read as it is, unchanged.
std::optional<profiler::RunStore> openExisting(const std::string& db, int& exitCode, bool emptyIsOk);
// profile and apply keep a verdict they had to compute (docs/cli.md) through a read-write
// connection opened for that alone — only when the store is at this binary's schema: a command
// that reads never upgrades a store. A failure to store it is a note, the verdict is still shown.
void keepVerdict(const profiler::RunStore& store, profiler::RunId id, const profiler::Verdict& verdict);
// The run by id or name; nullopt (message printed, exitCode kExitNotFound) if there is none.
std::optional<profiler::RunRow> findOrComplain(profiler::RunStore& store, const std::string& run, int& exitCode);

}  // namespace trainbench::cli
