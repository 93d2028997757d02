#pragma once
// What a run on emulated devices needs before it trains: the footprint against one replica's
// memory, the host's infeed (measured once per host, data section and batch, then reused), the
// virtual clock with its opening message and virtual.* attributes, and what the profiler records.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "app/experiment/experiment.h"
#include "app/run/deviceplan.h"
#include "app/run/runprofiler.h"
#include "engine/emulation/devicememory.h"
#include "engine/emulation/virtualclock.h"
#include "profiler/machine/infeedcache.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

// The infeed of a run on emulated devices: pinned by the experiment, or this host's rate for the
// data section and batch from the store (measured by the first run that needed it: the median of 30
// batches after 2), so that reruns get the same virtual time however busy the host is.
profiler::InfeedRate infeedOf(const Experiment& x, int64_t globalBatch, const std::string& dbPath);

// What one device needs against its memory (a pipeline: its fullest stage's device), fitting or not.
engine::MemoryCheck memoryOnDevice(const Experiment& x, const DevicePlan& plan, int64_t globalBatch,
                                   const engine::Dims& shape, int64_t classes);

// One replica's footprint against its memory, from the shapes alone (before anything is allocated
// here): a model or batch that does not fit fails as it would on the device (std::runtime_error).
engine::MemoryCheck fitOnDevice(const Experiment& x, const DevicePlan& plan, int64_t globalBatch,
                                const engine::Dims& shape, int64_t classes);

// Sets a run on emulated devices up: the host's infeed and the virtual clock, said through `say`
// and kept as virtual.* attributes (`writer` may be null). `memory`: fitOnDevice's result.
std::unique_ptr<engine::VirtualClock> emulate(const Experiment& x, const DevicePlan& plan, int64_t globalBatch,
                                              const engine::Dims& shape, int64_t classes,
                                              const engine::MemoryCheck& memory,
                                              const std::function<void(const std::string&)>& say,
                                              profiler::RunWriter* writer, const std::string& dbPath);

// What the profiler records of a run on emulated devices: one replica's step on the device.
RunProfiler::Emulation emulationProfile(engine::VirtualClock& clock, const DevicePlan& plan, int64_t globalBatch,
                                        const engine::MemoryCheck& memory);

}  // namespace trainbench::app
