#pragma once
// Opening the run store and finding a run for the commands that read it (runs, show, export,
// profile, apply), with the same messages and exit codes everywhere.
#include <optional>
#include <string>

#include "profiler/store/runstore.h"

namespace trainbench::cli {

// Opens an existing store; nullopt (with a message printed and exitCode set) when there is none or
// it is unusable. emptyIsOk: a missing file is "no runs yet" (exit 0) rather than an error.
std::optional<profiler::RunStore> openExisting(const std::string& db, int& exitCode, bool emptyIsOk);
// The run by id or name; nullopt (message printed, exitCode kExitNotFound) if there is none.
std::optional<profiler::RunRow> findOrComplain(profiler::RunStore& store, const std::string& run, int& exitCode);

}  // namespace trainbench::cli
