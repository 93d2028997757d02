#pragma once
// Runs a program to its end with its output captured, and measures what it cost the machine: its
// own CPU time (with every process it waited for, e.g. a job's workers) and how busy the rest of
// the machine was meanwhile — on a shared 2-core VM a run next to a compile is not worth quoting.
#include <string>
#include <vector>

namespace trainbench::bench {

struct ChildRun {
    int exitCode = -1;          // exit status, 128 + signal when killed, 127 when it could not start
    std::string out, err;       // standard output and error
    double wallSeconds = 0.0;
    double cpuSeconds = 0.0;    // user + system of the child and the processes it waited for
    double othersCpus = 0.0;    // CPUs kept busy by other processes, on average over the run
};

// argv[0] is the program's path. SIGINT and SIGTERM start at their default in the child; the caller
// decides what they do to itself (the scaling sweep ignores SIGINT while a run is on, so that
// Ctrl-C stops the run, which records it as stopped, and then the sweep).
ChildRun runChild(const std::vector<std::string>& argv);

}  // namespace trainbench::bench
