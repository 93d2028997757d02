#pragma once
// Exit codes of trainbench-cli, documented in docs/cli.md. In app/ rather than app/cli/: the job
// supervisor (app/job/) reads its tasks' exits with them.

namespace trainbench::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;     // the run started and failed (bad data, model error); recorded as failed
inline constexpr int kExitUsage = 2;         // bad command line or invalid experiment file; nothing ran
inline constexpr int kExitStore = 3;         // the run store cannot be opened, read or written
inline constexpr int kExitNotFound = 4;      // no such run
inline constexpr int kExitIo = 5;            // an output file cannot be written
inline constexpr int kExitStopped = 130;     // stopped with Ctrl-C (SIGINT) or SIGTERM; recorded as stopped

}  // namespace trainbench::app

// The commands of trainbench-cli spell them unqualified.
namespace trainbench::cli {
using app::kExitIo;
using app::kExitNotFound;
using app::kExitOk;
using app::kExitRunFailed;
using app::kExitStopped;
using app::kExitStore;
using app::kExitUsage;
}  // namespace trainbench::cli
