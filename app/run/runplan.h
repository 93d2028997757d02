#pragma once
// Stage 1 of a run (runExperiment): what the experiment's device and strategy sections come to on
// this machine, for this process of its job: the devices (real or emulated) and the placement of
// replicas, threads and the global batch.
#include <optional>
#include <string>

#include "app/experiment/experiment.h"
#include "app/run/deviceplan.h"
#include "engine/strategy/clusterspec.h"

namespace trainbench::app {

// What the strategy section comes to on this machine.
struct Placement {
    int replicas = 1;
    int threadsPerReplica = 1;
    int64_t globalBatch = 0;
    std::string devices;  // "cpu:4" one device of 4 threads; "cpu:1x2" two replicas of 1 thread
};

struct RunPlan {
    DevicePlan devices;
    Placement place;
};

// `cluster`: this process's task when it is one of a job (multi_worker, parameter_server; their
// workers and servers are the cluster spec's). Throws std::invalid_argument when a job's kind has no
// cluster spec, and what planDevices throws.
RunPlan planRun(const Experiment& x, const std::optional<engine::ClusterSpec>& cluster,
                const HostCalibrator& calibrate);

}  // namespace trainbench::app
