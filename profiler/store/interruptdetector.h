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

    // What a job's launcher knows once every task has ended: why the job failed. The run is the one
    // `writer` (the job's chief) was writing, found by its host, pid, start time and boot. A run it
    // left unfinished (ended by the launcher, or found interrupted since) becomes 'failed' with
    // `cause` (the whole story) and the last committed step; a run it failed itself keeps its own
    // message, with `othersCause` (what the other tasks did, which it could not see) added after
    // it. False, changing nothing, when there is no such run, it completed or was stopped, its
    // writer is still alive, or there is nothing to add.
    static bool recordJobFailure(Database& db, const ProcessIdentity& writer, const std::string& cause,
                                 const std::string& othersCause);
};

}  // namespace trainbench::profiler
