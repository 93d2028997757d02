#pragma once
// The coordinator of a parameter_server job, in the chief (TensorFlow's ClusterCoordinator): it
// serves the job's workers — tells each the job's layout when it joins, hands every step's batch to
// a free worker, takes the results, hands a lost worker's step to another — and sends a worker a
// heartbeat when it has had nothing else to say, so that the worker can tell a coordinator with no
// task for it from one that stopped. A worker that dies (its connection drops) or falls silent (no
// heartbeat for the timeout) loses its step to another: at-least-once, so a step whose gradient had
// reached some servers before its worker died is applied there twice. ParameterServerStrategy
// drives it from the training thread and talks to the parameter servers itself.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/pipeline/inputpipeline.h"
#include "engine/strategy/clusterspec.h"
#include "engine/strategy/psprotocol.h"
#include "engine/strategy/strategy.h"

namespace trainbench::engine {

// What the coordinator saw over a run.
struct ParameterServerStats {
    int64_t rescheduled_steps = 0;  // steps handed to another worker after theirs was lost
    int64_t lost_workers = 0;
    int64_t joined_workers = 0;     // connections accepted as workers, rejoins included
    std::vector<int64_t> staleness; // one value per applied update (step x server), in arrival order
    // Connections closed before a worker's Hello was accepted (a bad token, no Hello in time, a
    // protocol error), or turned away because too many waited for their Hello (PendingLimit).
    int64_t rejected_connections = 0;
    int64_t pending_connections = 0;  // connected, no Hello with the token yet
};

struct PsCoordinatorConfig {
    HostPort listen;                     // where workers reach the coordinator (the chief's address)
    std::string token;                   // the job's token: checked on every connection
    int workers = 1;                     // workers in the cluster spec (more may join, fewer may live)
    std::chrono::milliseconds timeout{30'000};  // a worker silent this long is lost
    std::function<void(const std::string&)> log;  // what happens to workers; may be called from any thread
};

class PsCoordinator {
public:
    // Starts listening for workers at once (they may connect before the first step); each is sent
    // `layout` when it joins. A step's batch has `exampleSize` floats per row. Throws
    // ConnectionError if it cannot listen on config.listen.
    PsCoordinator(PsCoordinatorConfig config, ps::JobLayout layout, int64_t exampleSize);
    ~PsCoordinator();
    PsCoordinator(const PsCoordinator&) = delete;
    PsCoordinator& operator=(const PsCoordinator&) = delete;

    uint16_t port() const;  // where it listens

    // Before the first step, every worker of the cluster spec gets up to the timeout to join, as
    // TensorFlow's ClusterCoordinator connects to every worker first: otherwise the workers that
    // started first can finish a short job alone, and one that starts later finds the coordinator
    // gone. Workers missing then are named and the job starts with the others; they may still join.
    void awaitWorkers();
    // Hands the step to a worker, returning once one has it (at most one step per worker). Throws
    // ConnectionError when the job cannot go on: a worker failed, a parameter server was reported
    // lost, or no worker has been connected for the timeout.
    void dispatch(const BatchView& batch, int64_t step, uint64_t stepSeed);
    // The steps finished since the last call; with `all`, after waiting for every step in flight.
    std::vector<StrategyStep> completed(bool all);
    // The job is over: every worker is sent Shutdown, and what happens to their connections from
    // now on is no loss. awaitShutdownsSent() then lets those go out before this process ends.
    void shutdownWorkers();
    void awaitShutdownsSent(std::chrono::milliseconds limit);

    ParameterServerStats stats() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
