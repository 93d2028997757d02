#pragma once
// The versions of trainbench and the libraries it runs on, as `trainbench-cli --version` and the
// GUI's About box show them.
#include <string>
#include <utility>
#include <vector>

namespace trainbench::app {

// trainbench's own version ("0.1.0").
std::string trainbenchVersion();

// {"oneDNN", "2.6.3"}, {"SQLite", "3.40.1"}, ...: the libraries linked into this binary, as they
// report themselves at run time (not the headers compiled against).
std::vector<std::pair<std::string, std::string>> libraryVersions();

}  // namespace trainbench::app
