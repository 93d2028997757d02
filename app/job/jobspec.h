#pragma once
// A job of tasks on this machine as the job supervisor runs it: the experiment's strategy section
// (multi_worker or parameter_server), the restart policy, and where its notes go.
#include <chrono>
#include <functional>
#include <string>

#include "engine/strategy/strategykind.h"

namespace trainbench::app {

struct JobSpec {
    engine::StrategyKind kind = engine::StrategyKind::MultiWorker;  // or ParameterServer
    // multi_worker: the trainers, the chief the first of them. parameter_server: the workers besides
    // the chief, which coordinates.
    int workers = 1;
    int servers = 0;                              // parameter_server: the parameter servers
    std::chrono::milliseconds timeout{30'000};    // strategy.timeout_s
    int maxRestarts = 0;                          // strategy.max_restarts
    std::string checkpoint;                       // every incarnation's checkpoint file; empty: none (no restart)
    bool quiet = false;                           // say only failures and restarts
    // strategy.collective "mpi": the job's one task is mpirun, which starts this many ranks
    // (MpirunTaskHost); 0: every task is a process of the supervisor's own.
    int mpiRanks = 0;

    // A parameter_server job: its workers are not essential, and it names tasks rather than ranks.
    bool asynchronous() const { return kind == engine::StrategyKind::ParameterServer; }
};

// Where the supervisor says what happens (a line, no newline): the job's banner, a lost worker, a restart.
using JobLog = std::function<void(const std::string& line)>;

}  // namespace trainbench::app
