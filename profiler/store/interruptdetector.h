#pragma once
// Finds runs left in status 'running' by a process that is gone (SIGKILL, crash, power loss,
// reboot) and marks them 'interrupted'. Only runs whose writer ran on this host can be judged:
//   same host, other boot id            -> interrupted (the machine rebooted since);
//   same host, same boot, pid not alive  -> interrupted (no process, a zombie, or a reused pid
//                                           whose start time differs from proc_start);
//   other host                          -> left alone (we cannot see its processes).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/processidentity.h"
#include "profiler/store/runid.h"

namespace trainbench::profiler {

class Database;

struct InterruptedRun {
    RunId id;
    std::optional<int64_t> lastStep;  // highest committed step, if any
    std::string message;              // what runs.message is set to
};

class InterruptDetector {
public:
    // Reads only: usable on read-only connections to show the status a writer would store.
    static std::vector<InterruptedRun> find(Database& db, const ProcessIdentity& self);

    // Marks what find() returns, in one transaction; returns how many runs changed. A run that
    // finished meanwhile is left as its writer stored it.
    static int mark(Database& db, const ProcessIdentity& self);
};

}  // namespace trainbench::profiler
