#pragma once
// Starting a child process the way trainbench's supervisors want it: in a process group of its own
// (a Ctrl-C at the terminal reaches only the parent, which relays it once) and with the default
// signal mask (the parent blocks SIGINT/SIGTERM in every thread, app/cli/stopsignals.h; the child
// installs its own stop handling).
#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace trainbench::app {

// argv[0] included; env: NAME=value entries, or null for this process's environment. `actions` may be
// null. std::runtime_error with the system's reason ("No such file or directory") when it cannot be
// started; the caller names what it started.
pid_t spawnInOwnGroup(const std::string& program, std::vector<std::string> argv, std::vector<std::string>* env,
                      const posix_spawn_file_actions_t* actions);

}  // namespace trainbench::app
