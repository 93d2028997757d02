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
#include "engine/emulation/devicespec.h"
#include "engine/emulation/parameterserverclock.h"
#include "engine/emulation/topology.h"
#include "engine/emulation/virtualclock.h"

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
    // Emulated multi_worker and parameter_server: one device per worker host, the hosts joined by
    // this network (each host's link, one direction). multi_worker's topology is a ring of it.
    // hostNetwork() is the one place it is made, so that another network can stand in.
    std::optional<engine::LinkParams> network;
    // Emulated pipeline: one device per stage, adjacent stages joined by this link (NVLink or PCIe).
    std::optional<engine::LinkParams> pipeline_link;
    int parameter_servers = 0;            // parameter_server: the ps hosts the variables are on
    double ps_memory_bytes_per_s = 0.0;   // parameter_server: what a ps host applies updates at
    // Examples one replica trains per step of `stepBatch` (parameter_server: a step is one worker's
    // batch). std::invalid_argument when a synchronous batch does not split evenly.
    int64_t replicaBatch(int64_t stepBatch) const;
    // cpu-host with every core computing: the gradient exchange needs cores too (sums, copies, the
    // TCP stack), so it cannot hide behind backward as a device's does.
    bool exchange_takes_cores = false;
    // cpu-host: this host's input pipeline feeds the device, so its measured rate is charged: in full
    // with prefetch 0 (the trainer makes each batch), beyond the device's step with prefetch.
    bool host_pipeline = false;
};

// This host as an emulated device (device.type "cpu-host") at a thread count: its roofs, RAM and
// fitted kernel rates (a calibrated catalog entry), and the links its replicas exchange over.
struct HostCalibration {
    engine::DeviceSpec spec;
    engine::LinkParams shared_memory;  // mirrored replica threads
    engine::LinkParams loopback;       // multi_worker processes on this host
};
using HostCalibrator =
    std::function<HostCalibration(const engine::DeviceSpec& catalogEntry, int threadsPerReplica, int replicas)>;

// The calibrator of runs recording into storePath: the roofs and host model cached in that store,
// measured (and saved) when it has none for this host and thread count.
HostCalibrator storeCalibrator(const std::string& storePath);

// `jobWorkers` and `jobServers` (0: the experiment's strategy.replicas and parameter_servers) are a
// job's workers and parameter servers when a cluster spec decides them. Throws std::invalid_argument
// (or DeviceCatalogError for a bad user catalog) naming the key path. device.type "cpu-host" needs a
// calibrator (std::invalid_argument without one).
DevicePlan planDevices(const Experiment& x, const HostCalibrator& calibrate = {}, int jobWorkers = 0,
                       int jobServers = 0);

// The network between the hosts of a job on emulated devices: device.network_gbps (Gbit/s, one
// direction) and device.network_latency_us.
engine::LinkParams hostNetwork(const Experiment& x);

// The virtual clock of an emulated plan, with the host's measured time per global batch.
engine::VirtualClockConfig virtualClockConfig(const DevicePlan& plan, const Experiment& x,
                                              double infeedSecondsPerBatch);

// The clock of an emulated parameter_server plan, with a worker host's time per worker batch.
engine::ParameterServerClockConfig parameterServerClockConfig(const DevicePlan& plan, const Experiment& x,
                                                              double infeedSecondsPerBatch);

}  // namespace trainbench::app
