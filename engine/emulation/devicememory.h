#pragma once
// Does a step's footprint fit one replica's memory on an emulated device? A model or batch that
// does not fit fails as it would on the device ("out of memory on tpu-v3 core: needs 18.2 GiB of
// 16.0 GiB HBM — parameters 0.10, ..."); one at 90 % or more is flagged near capacity
// (memory-bound by capacity).
#include <string>

#include "engine/emulation/devicespec.h"
#include "engine/device/opdesc.h"

namespace trainbench::engine {

struct MemoryCheck {
    double params_bytes = 0.0;
    double grads_bytes = 0.0;
    double optimizer_bytes = 0.0;
    double activation_bytes = 0.0;  // at the run's precision (bf16 halves them)
    double needed_bytes = 0.0;
    double capacity_bytes = 0.0;  // one replica's share of the device memory
    double fraction = 0.0;        // needed / capacity
    bool fits = true;
    bool near_capacity = false;  // fits, at kNearCapacity or more
    // The out-of-memory error when it does not fit, the near-capacity warning when near, else empty.
    std::string message;
};

inline constexpr double kNearCapacity = 0.9;

// The graph's footprint (params, gradients, optimizer state, activations) against one replica of
// `device`. With bf16 the activations are stored in 16 bits; parameters, gradients and optimizer
// state stay fp32 (master weights), as in mixed-precision training. std::invalid_argument for an
// uncalibrated cpu-host (its memory is the host's RAM, given by withCalibration).
MemoryCheck checkMemory(const OpGraph& graph, const DeviceSpec& device, Precision precision);

}  // namespace trainbench::engine
