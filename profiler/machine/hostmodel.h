#pragma once
// This host as an emulated device ("cpu-host" in the device catalog): what the virtual clock needs
// beyond the roofs to predict a run here — how long each kind of kernel takes (fitted to probe
// models, kernelprobe.h / kernelfit.h) and how fast replicas exchange gradients, in shared memory
// (mirrored) and over TCP on the loopback interface (multi_worker processes). Measured once per host
// and thread count, kept in the run store's host_models table as JSON (docs/run-store.md).
#include <functional>
#include <string>

#include "engine/emulation/kernelrates.h"
#include "engine/emulation/topology.h"
#include "profiler/machine/cacheprobe.h"

namespace trainbench::profiler {

struct HostModel {
    std::string host;
    int threads = 0;                  // compute threads of one replica
    int replicas = 1;                 // replicas sharing the host while the kernels were probed
    std::string measured_at;          // ISO-8601 UTC
    engine::KernelRates kernels;      // their cache_bytes and spill_slowdown come from `cache`
    CacheCurve cache;                 // the streaming sweep (cacheprobe.h), `replicas` copies
    double kernel_fit_error = 0.0;    // RMS relative error of the fit on its own probes
    // One link of a two-rank all-reduce, inverted from its measured time (docs/devices.md):
    engine::LinkParams shared_memory; // replica threads of one process (a switch)
    engine::LinkParams loopback;      // processes over TCP on 127.0.0.1 (Gloo's ring)
    bool complete() const { return !kernels.empty() && shared_memory.beta_s_per_byte > 0 && loopback.beta_s_per_byte > 0; }
};

// Measures it with `threads` compute threads per replica (0: every core) and `replicas` replicas
// probing at once (kernelprobe.h). Takes a few seconds; binds the calling thread's OpenMP budget as
// measureRoofs does.
HostModel measureHostModel(int threads, int replicas = 1);

std::string hostModelJson(const HostModel& model);
// std::invalid_argument naming the key when the JSON is not a host model.
HostModel hostModelFromJson(const std::string& json);

// The stored model of this host at `threads` per replica and `replicas` replicas, or a fresh
// measurement saved to the store (serialised between processes like the roofs). Throws StoreError
// when the store cannot be opened.
HostModel hostModelFor(const std::string& storePath, int threads, int replicas = 1, bool remeasure = false);
// The same with a stand-in for measureHostModel (tests).
using HostModelMeasurer = std::function<HostModel(int threads, int replicas)>;
HostModel hostModelFor(const std::string& storePath, int threads, int replicas, bool remeasure,
                       const HostModelMeasurer& measure);

}  // namespace trainbench::profiler
