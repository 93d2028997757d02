#pragma once
// Which runs of the store a reading command looks at: `tta` and `plan` take the same filters as
// `runs` (--status, --limit) plus --name, --model and --device.
#include <string>
#include <vector>

#include "profiler/store/runrow.h"

namespace CLI {
class App;
}

namespace trainbench::cli {

struct RunFilter {
    std::string status;  // a run status name; empty: any
    std::string name;    // part of the run's name; empty: any
    std::string model;   // runs.model exactly ("mlp"); empty: any
    std::string device;  // device type ("tpu-v3", "cpu-host") or the start of runs.devices ("cpu:2")
    int limit = 0;       // the newest N runs that match; 0: all

    // Empty, or what is wrong (an unknown status).
    std::string problem() const;
    bool matches(const profiler::RunRow& run) const;
    // The matching runs, newest first as listRuns gives them, at most `limit`.
    std::vector<profiler::RunRow> apply(const std::vector<profiler::RunRow>& runs) const;
};

void addRunFilterOptions(CLI::App& command, RunFilter& filter);

}  // namespace trainbench::cli
