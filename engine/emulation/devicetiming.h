#pragma once
// The time an op, and a whole training step, would take on one replica of an emulated device: the
// virtual clock's cost model (docs/devices.md). An op takes
//   max(compute, bytes / memory bandwidth) + the device's per-op overhead,
// where compute charges matrix products to the matrix units (TPU MXUs with their padding, GPU
// tensor cores or CUDA cores by precision) and everything else to the vector / fp32 rate. The
// calibrated host (cpu-host) is timed by its kernels' fitted rates instead (kernelrates.h).
#include <vector>

#include "engine/emulation/devicespec.h"
#include "engine/device/opdesc.h"

namespace trainbench::engine {

// One call of one op on one replica.
struct OpTiming {
    double seconds = 0.0;       // max(compute_s, memory_s) + per-op overhead
    double compute_s = 0.0;     // matrix part at the matrix rate + the rest at the vector rate
    double memory_s = 0.0;      // bytes moved / memory bandwidth
    double useful_flops = 0.0;  // the op's FLOPs (OpCost::flops)
    double issued_flops = 0.0;  // FLOPs as the hardware issues them: the matrix part after padding
    bool matrix_unit = false;   // the matrix product ran on MXUs / tensor cores / the fp32 GEMM rate
    // Useful / padded FLOPs of the matrix product: 1 with no padding (and for non-matrix ops).
    double matrix_utilisation = 1.0;
    double bytes = 0.0;  // bytes moved at this precision
    bool memoryBound() const { return memory_s > compute_s; }
};

// The padded shape a TPU's MXUs compute: k and n rounded up to multiples of the MXU size (128),
// m (the batch / rows) to a multiple of 8 — the Cloud TPU performance guide's padding rules. Other
// devices do not pad.
MatrixShape paddedShape(const MatrixShape& shape, const DeviceSpec& device);

// One call of `op` on one replica of `device` at `precision`. Bytes follow the precision: bf16
// halves the traffic of forward and backward ops (activations and weights in 16 bits); optimizer
// updates keep fp32 master weights and state, so their bytes are unchanged. `parameterBytes` are
// one replica's parameters, gradients and optimizer state: the calibrated host charges the bytes
// of ops that touch them by how much of them its caches hold (kernelrates.h). std::invalid_argument
// when the device has no such precision or is an uncalibrated cpu-host.
OpTiming opTime(const OpDesc& op, const DeviceSpec& device, Precision precision, double parameterBytes = 0.0);

// A training step of one replica: every op times its calls per step, by part, plus the device's
// per-step overhead (host, infeed, synchronisation; on the calibrated host, the measured time its
// steps spend outside the graph's ops).
struct StepTiming {
    double forward_s = 0.0;
    double backward_s = 0.0;
    double optimizer_s = 0.0;
    double overhead_s = 0.0;       // the per-step overhead
    double seconds = 0.0;          // all of the above
    double compute_bound_s = 0.0;  // time in ops whose compute exceeds their memory time
    double memory_bound_s = 0.0;   // time in ops bound by memory bandwidth
    // Matrix-unit utilisation weighted by the time of the matrix ops (0 when there are none).
    double matrix_utilisation = 0.0;
    double matrix_s = 0.0;      // time of the ops on the matrix units
    std::vector<OpTiming> ops;  // one call of each op of the graph, in graph order
};

StepTiming stepTime(const OpGraph& graph, const DeviceSpec& device, Precision precision);

}  // namespace trainbench::engine
