#include "engine/emulation/inferenceestimate.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "engine/emulation/devicetiming.h"

namespace trainbench::engine {

namespace {

std::string mib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
    return buf;
}

}  // namespace

double bytesPerElement(Precision precision) {
    switch (precision) {
        case Precision::Fp32: case Precision::Tf32: return 4.0;
        case Precision::Bf16: return 2.0;
        case Precision::Int8: return 1.0;
    }
    return 4.0;
}

InferenceEstimate estimateInference(const OpGraph& forward, const DeviceSpec& device, Precision precision) {
    InferenceEstimate e;
    e.precision = precision;
    e.batch = forward.batch;
    const double scale = bytesPerElement(precision) / 4.0;  // the graph counts fp32 bytes
    e.weight_bytes = forward.params_bytes * scale;
    e.memory_bytes = (forward.params_bytes + forward.activation_bytes) * scale;
    try {
        device.replicaMatrixFlops(precision);  // throws, naming the device, when it has no such mode
    } catch (const std::invalid_argument& err) {
        e.why_not = err.what();
        return e;
    }
    if (device.npu) {
        // Parameters live in on-chip memory; what does not fit is streamed from the host per
        // invocation. Activations stay on chip (how the Edge TPU divides its SRAM is not published).
        e.streamed_bytes = std::max(0.0, e.weight_bytes - device.replicaMemoryBytes());
        e.stream_seconds = e.streamed_bytes / device.npu->host_link_bytes_per_s;
        if (e.streamed_bytes > 0.0)
            e.note = "parameters " + mib(e.weight_bytes) + " exceed the " + mib(device.replicaMemoryBytes()) +
                     " of on-chip memory: " + mib(e.streamed_bytes) + " streamed from the host over its link per " +
                     "invocation (one batch)";
    } else if (e.memory_bytes > device.replicaMemoryBytes()) {
        e.why_not = "needs " + mib(e.memory_bytes) + " (weights " + mib(e.weight_bytes) + " + activations at " +
                    precisionName(precision) + "), " + device.replicaLabel() + " has " +
                    mib(device.replicaMemoryBytes()) + " of " + device.memoryName();
        return e;
    }
    e.fits = true;
    e.seconds = stepTime(forward, device, precision).seconds + e.stream_seconds;
    e.examples_per_s = static_cast<double>(forward.batch) / e.seconds;
    e.usd_per_million = device.replicaPricePerHour() / 3600.0 * e.seconds / static_cast<double>(forward.batch) * 1e6;
    return e;
}

}  // namespace trainbench::engine
