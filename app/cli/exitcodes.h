#pragma once
// Exit codes of trainbench-cli, documented in docs/cli.md.

namespace trainbench::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;     // the run started and failed (bad data, model error); recorded as failed
inline constexpr int kExitUsage = 2;         // bad command line or invalid experiment file; nothing ran
inline constexpr int kExitStore = 3;         // the run store cannot be opened, read or written
inline constexpr int kExitNotFound = 4;      // no such run
inline constexpr int kExitIo = 5;            // an output file cannot be written
inline constexpr int kExitStopped = 130;     // stopped with Ctrl-C (SIGINT) or SIGTERM; recorded as stopped

}  // namespace trainbench::cli
