#pragma once
// The subcommands of trainbench-cli. Each returns the process exit code (see exitcodes.h).
#include <string>
#include <vector>

namespace trainbench::cli {

struct RunArgs {
    std::string file;
    std::string db;
    std::vector<std::string> overrides;
    bool quiet = false;
};
class StopSignals;
int runCommand(const RunArgs& args, const StopSignals& signals);
int validateCommand(const std::string& file, const std::vector<std::string>& overrides);

int runsCommand(const std::string& db, const std::string& status, int limit);
int showCommand(const std::string& db, const std::string& run);
struct ExportArgs {
    std::string db;
    std::string run;
    std::string what = "steps";  // steps | evals
    std::string output;          // empty: stdout
};
int exportCommand(const ExportArgs& args);

}  // namespace trainbench::cli
