#pragma once
// tpu_pod's device plan: the Cloud TPU slice named by strategy.slice as replicas (TensorCores; on
// v4 the chips, megacore), the links they exchange gradients over, and what is charged (chips).
// Its numerics run as one pass over the global batch (engine/strategy/tpupodstrategy.h).
#include "app/experiment/experiment.h"
#include "app/run/deviceplan.h"
#include "engine/emulation/devicespec.h"

namespace trainbench::app {

// `spec`: the TPU of device.type (a catalog entry with its TpuSpec). Throws std::invalid_argument
// for a slice name that is not one of its generation's.
void planTpuPod(DevicePlan& p, const Experiment& x, const engine::DeviceSpec& spec);

}  // namespace trainbench::app
