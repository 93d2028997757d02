#pragma once
// `trainbench-ui-bench startup`: the real `trainbench` program started on a store of 1,000 runs
// until its window is up with every run listed (its --startup-probe), against the 1.5 s goal;
// the same on an empty store is the comparator (what the runs cost).
#include <string>

namespace trainbench::bench {

struct StartupOptions {
    int runs = 1000;
    int stepsPerRun = 200;
    int repetitions = 7;
    std::string db;       // an existing store to start on; empty: build one with `runs` runs
    std::string program;  // the trainbench binary; empty: the one built alongside
};

int runStartupBench(const StartupOptions& options);

}  // namespace trainbench::bench
