#pragma once
// A forward pass of `batch` examples on one replica of an emulated device at an inference precision:
// whether the model fits, its latency on the training emulation's cost model (devicetiming.h, per-op
// and per-step overheads included) and its cost per million predictions (docs/devices.md).
#include <string>

#include "engine/device/opdesc.h"
#include "engine/emulation/devicespec.h"

namespace trainbench::engine {

struct InferenceEstimate {
    Precision precision = Precision::Fp32;
    int64_t batch = 0;
    bool fits = false;
    std::string why_not;         // when !fits: what the device lacks, in words for the user
    double weight_bytes = 0.0;   // the parameters at the precision's width
    double memory_bytes = 0.0;   // weights + activations in flight at the precision's width
    // An accelerator with on-chip parameter memory (DeviceKind::Npu): the int8 parameters beyond it,
    // streamed from the host over its link on every invocation (one batch), as the Edge TPU compiler
    // arranges it, and the time that takes (included in `seconds`); `note` says so in words.
    double streamed_bytes = 0.0;
    double stream_seconds = 0.0;
    std::string note;
    double seconds = 0.0;        // latency of one batch (0 when it does not fit)
    double examples_per_s = 0.0;
    double usd_per_million = 0.0;  // replica price per hour x time per example x 1e6
};

// Bytes of one element at `precision`: 4, 2 (tf32 and bf16 are stored 32 and 16 bits), 1.
double bytesPerElement(Precision precision);

// `forward` is an evaluation graph (evaluationGraph(): fp32 byte counts). Never throws for a
// precision the device lacks or a model too large: the estimate says why it cannot run.
InferenceEstimate estimateInference(const OpGraph& forward, const DeviceSpec& device, Precision precision);

}  // namespace trainbench::engine
