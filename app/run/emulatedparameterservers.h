#pragma once
// The virtual clock of a parameter_server job on emulated devices, as the chief sets it up: what a
// worker's step and the servers' rounds cost, which of them bounds the job (a note when it is the
// servers), and the figures kept with the run (virtual.* attributes).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "app/experiment/experiment.h"
#include "app/run/deviceplan.h"
#include "engine/emulation/devicememory.h"
#include "engine/emulation/parameterserverclock.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

// `workerBatch`: one worker's batch (a step); `infeed`: a worker host's time to make it; `memory`:
// one worker's footprint, already checked. `writer` may be null (nothing recorded). Throws std::invalid_argument when the device cannot time the model.
std::unique_ptr<engine::ParameterServerClock> emulateParameterServers(const Experiment& x, const DevicePlan& plan,
                                                                      int64_t workerBatch, const engine::Dims& shape,
                                                                      int64_t classes, double infeed,
                                                                      const engine::MemoryCheck& memory,
                                                                      const std::function<void(const std::string&)>& say,
                                                                      profiler::RunWriter* writer);

}  // namespace trainbench::app
