#pragma once
// A worker task of a parameter_server job: it takes training steps from the coordinator one at a
// time, pulls the current parameters from every parameter server, computes the batch's gradient and
// pushes each server its shard of it, without waiting for the other workers (asynchronous training,
// as TensorFlow's ParameterServerStrategy).
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "engine/model/modelspec.h"

namespace trainbench::engine {

struct PsWorkerConfig {
    std::string coordinatorHost = "127.0.0.1";
    int coordinatorPort = 0;
    std::string token;   // the job's token
    uint32_t index = 0;  // this worker's index in the cluster spec
    int threads = 1;     // compute threads
    ModelSpec model;     // must have the parameter count the coordinator's JobLayout says
    uint64_t seed = 0;   // initial parameters; the servers' values replace them at the first pull
    // How long the coordinator and the servers may take to start listening.
    std::chrono::milliseconds connectTimeout{30'000};
    // strategy.timeout_s: a server silent this long during a pull or push (or taking none of its
    // bytes) is lost, and so is the coordinator, between tasks too (it sends heartbeats); also the
    // wait for Welcome and JobLayout.
    std::chrono::milliseconds timeout{30'000};
};

struct PsWorkerSummary {
    int64_t steps = 0;
    int64_t samples = 0;
    double compute_seconds = 0.0;
    double pull_seconds = 0.0;
    double push_seconds = 0.0;
    uint64_t max_staleness = 0;  // over all steps and servers
};

// Runs until the coordinator sends Shutdown, and returns what was done. Throws ConnectionError when
// the coordinator goes away or falls silent for the timeout, or a parameter server fails (after telling the coordinator with
// PsLost; the message names the server, its address and the step); ProtocolError for a malformed
// message; ModelError when the model does not match the job's layout. For everything but a lost
// connection the coordinator is told why with an Error message first. `log` (may be empty) gets a
// line when the worker joins the job and when it leaves.
PsWorkerSummary runParameterServerWorker(const PsWorkerConfig& config, const std::function<void(const std::string&)>& log);

}  // namespace trainbench::engine
