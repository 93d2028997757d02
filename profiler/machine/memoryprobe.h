#pragma once
// A run's memory: what the model needs by its shapes (footprintOf) and what the process and the
// host report (/proc, getrusage), for the capacity side of the verdict: a footprint near the
// device's memory, or swapping, means the run is bound by memory capacity.
#include <cstdint>

#include "engine/optim/optimizerconfig.h"
#include "profiler/machine/machineinfo.h"

namespace trainbench::engine {
class Model;
}

namespace trainbench::profiler {

// Peak resident set of this process (VmHWM in /proc/self/status), bytes; 0 if unreadable.
int64_t peakRssBytes();

// Lowers the peak resident set to the current one (writes 5 to /proc/self/clear_refs, Linux 4.0+),
// so the next peakRssBytes() covers only what follows, e.g. training without the calibration's
// arrays. False if the kernel refused.
bool resetPeakRss();

// Physical memory of the host (sysconf), bytes. A cgroup limit, if any, is not applied.
int64_t hostMemoryBytes();

// The last-level cache of the cores this process runs on, bytes: the highest cache level of cpu0
// in sysfs (what its cores share; a VM's CPUID may report the whole socket's instead), else
// sysconf's level 3 or 2; 0 if none says.
int64_t lastLevelCacheBytes();

// Pages swapped in plus out since boot, system-wide (pswpin + pswpout in /proc/vmstat); 0 if
// unreadable. The kernel keeps no per-process count; compare two readings.
int64_t swapPages();

// Major page faults of this process so far (getrusage): pages read back from disk or swap.
int64_t majorFaults();

// Optimizer state per parameter, in floats: Adam keeps m and v (2), SGD with momentum a velocity
// (1), plain SGD nothing.
double optimizerStateFloatsPerParam(const engine::OptimizerConfig& config);

// The model's memory for one training step on `batch` examples, from its shapes (4 bytes a float):
// parameters, their gradients, optimizer state, and activations (see memoryprobe.cpp for what
// counts), against deviceMemoryBytes (the experiment's device.memory_mb) or, when 0, the host's
// RAM. Process figures (peak RSS, swapping) are left to MemoryWatch. Throws std::invalid_argument
// unless batch > 0.
MemoryFootprint footprintOf(const engine::Model& model, int64_t batch,
                            double optimizerStateFloatsPerParam, double deviceMemoryBytes = 0.0);

}  // namespace trainbench::profiler
