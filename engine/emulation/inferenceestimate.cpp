#include "engine/emulation/inferenceestimate.h"

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
    if (e.memory_bytes > device.replicaMemoryBytes()) {
        e.why_not = "needs " + mib(e.memory_bytes) + " (weights " + mib(e.weight_bytes) + " + activations at " +
                    precisionName(precision) + "), " + device.replicaLabel() + " has " +
                    mib(device.replicaMemoryBytes()) + " of " + device.memoryName();
        return e;
    }
    e.fits = true;
    e.seconds = stepTime(forward, device, precision).seconds;
    e.examples_per_s = static_cast<double>(forward.batch) / e.seconds;
    e.usd_per_million = device.replicaPricePerHour() / 3600.0 * e.seconds / static_cast<double>(forward.batch) * 1e6;
    return e;
}

}  // namespace trainbench::engine
