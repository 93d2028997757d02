#pragma once
// A dry run (trainbench-cli estimate): what an experiment would take on its emulated devices, from
// the op graph alone — step time, memory per replica, throughput, time and cost of the whole run —
// without running numerics, so that a model too large to train here (a ResNet-50 on ImageNet) can
// be planned across devices and slice sizes. The data set is opened for its shape only (dataset
// "shape" not even that), except on cpu-host, where this host's pipeline is timed as well.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/experiment/experiment.h"
#include "app/run/deviceplan.h"
#include "app/run/splitadvice.h"
#include "engine/emulation/devicememory.h"
#include "engine/emulation/parameterserverclock.h"
#include "engine/emulation/virtualclock.h"

namespace trainbench::app {

// What the model sees of the data: one example's shape, the classes, the examples of an epoch.
struct DataShape {
    engine::Dims sample;
    int64_t classes = 0;
    int64_t train_examples = 0;
};

// dataset "shape": its data.shape section; otherwise the data set is opened to read its shape
// (throws DataError as a run would when it cannot be read).
DataShape dataShapeOf(const Experiment& x);

struct Estimate {
    std::string devices;          // e.g. "tpu-v3:v3-32"
    std::string replica_label;    // "tpu-v3 core"
    int replicas = 1;
    bool matrix_units = true;     // MXUs or tensor cores (a CPU has none: no utilisation to show)
    int64_t device_count = 1;     // charged: chips, GPUs
    int64_t global_batch = 0;
    int64_t replica_batch = 0;
    // One step, virtual seconds by part. No infeed (there is no host pipeline of the devices' hosts
    // here) unless pinned (device.infeed_seconds_per_batch), or on cpu-host, whose pipeline is this
    // host's: measured, and charged as a run here would wait for it (DevicePlan::host_pipeline).
    engine::VirtualStep step;
    double flops_per_step = 0.0;  // useful FLOPs of one replica's step
    engine::MemoryCheck memory;   // one replica
    // Not fitting or near capacity on one GPU: the pipeline splits that fit (splitadvice.h).
    std::vector<MemorySplit> splits;
    double samples_per_second = 0.0;
    int64_t steps = 0;            // of the whole run: epochs x steps per epoch, or max_steps
    double train_seconds = 0.0;   // steps x step time (evaluations not included)
    std::optional<double> price_per_device_hour;
    std::optional<double> cost;   // device_count x price x train_seconds
    // parameter_server: a worker's step and the servers' rounds; `step` is then the job's time per
    // step (a round over the workers) and global_batch one worker's batch.
    std::optional<engine::ParameterServerStep> parameter_servers;
};

// Throws std::invalid_argument when the experiment is not on an emulated device or its batch does
// not split over the replicas. A model that does not fit is reported (memory.fits false), not thrown.
// device.type "cpu-host" is timed from this host's calibration (`calibrate`), and its infeed is this
// host's rate from the run store at `storePath` (measured into it on first use; none without a store).
Estimate estimateExperiment(const Experiment& x, const DataShape& data, const HostCalibrator& calibrate = {},
                            const std::string& storePath = {});

}  // namespace trainbench::app
