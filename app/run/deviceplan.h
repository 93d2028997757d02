#pragma once
// What an experiment's device and strategy sections put the run on: this host's CPU on the wall
// clock, or emulated devices of the catalog on a virtual clock (how many replicas, joined how, at
// what precision), and what it is charged per hour. Every run gets a price when the catalog (or the
// experiment) has one, so that every run records a cost.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "app/experiment/experiment.h"
#include "engine/device/devicespec.h"
#include "engine/device/topology.h"
#include "engine/device/virtualclock.h"

namespace trainbench::app {

struct DevicePlan {
    bool emulated = false;
    engine::DeviceSpec spec;            // the catalog entry ("cpu-host" for this host)
    engine::Precision precision = engine::Precision::Fp32;
    int replicas = 1;                   // emulated data-parallel replicas (TPU cores, GPUs)
    int64_t device_count = 1;           // what is charged: GPUs, TPU chips, or 1 host
    std::optional<double> price_per_device_hour;
    std::optional<engine::Topology> topology;  // how emulated replicas exchange gradients
    std::string devices;                // the runs table's devices, e.g. "tpu-v3:32", "a100-sxm4-40gb:8"
    double replica_memory_bytes = 0.0;  // emulated: the memory one replica has
};

// This host as an emulated device (device.type "cpu-host") at a thread count: its roofs, RAM and
// fitted kernel rates (a calibrated catalog entry), and the links its replicas exchange over.
struct HostCalibration {
    engine::DeviceSpec spec;
    engine::LinkParams shared_memory;  // mirrored replica threads
    engine::LinkParams loopback;       // multi_worker processes on this host
};
using HostCalibrator = std::function<HostCalibration(const engine::DeviceSpec& catalogEntry, int threads)>;

// The calibrator of runs recording into storePath: the roofs and host model cached in that store,
// measured (and saved) when it has none for this host and thread count.
HostCalibrator storeCalibrator(const std::string& storePath);

// Throws std::invalid_argument (or DeviceCatalogError for a bad user catalog) naming the key path.
// device.type "cpu-host" needs a calibrator (std::invalid_argument without one).
DevicePlan planDevices(const Experiment& x, const HostCalibrator& calibrate = {});

// The virtual clock of an emulated plan, with the host's measured time per global batch.
engine::VirtualClockConfig virtualClockConfig(const DevicePlan& plan, const Experiment& x,
                                              double infeedSecondsPerBatch);

}  // namespace trainbench::app
