#pragma once
// The lifecycle of a run as stored in runs.status.
#include <optional>
#include <string>
#include <string_view>

namespace trainbench::profiler {

enum class RunStatus {
    Running,      // a process is (or was, until found dead) writing the run
    Completed,    // the trainer reached its budget or target
    Failed,       // the run ended with an error (message says which)
    Interrupted,  // the process died without finishing (SIGKILL, crash, reboot); found afterwards
    Stopped,      // the user stopped it (Ctrl-C, GUI stop button)
};

// The text stored in the database: "running", "completed", ...
std::string_view runStatusName(RunStatus status);

// Inverse of runStatusName; std::nullopt for anything else.
std::optional<RunStatus> parseRunStatus(std::string_view text);

}  // namespace trainbench::profiler
