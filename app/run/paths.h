#pragma once
// Where trainbench keeps things by default.
#include <string>

namespace trainbench::app {

// The user's default run store: $TRAINBENCH_DB, else $XDG_DATA_HOME/trainbench/runs.db,
// else ~/.local/share/trainbench/runs.db. The folder is created when needed by the store.
std::string defaultRunStorePath();

}  // namespace trainbench::app
