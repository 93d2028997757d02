#pragma once
// How long this host's kernels take, kind by kind: the cost model of the emulated device "cpu-host"
// once the profiler has calibrated it (profiler/machine/kernelfit.h). A CPU kernel does not overlap
// its arithmetic with its memory traffic the way a roofline's max() assumes, and small shapes pay
// fixed costs (packing, threading), so each kind is fitted to probe measurements as
//   seconds = overhead + FLOPs x seconds per FLOP + bytes x seconds per byte
// with non-negative coefficients. Kinds the probes never ran fall back to their family's fit.
#include <map>
#include <string>

namespace trainbench::engine {

struct KernelRate {
    double overhead_s = 0.0;
    double seconds_per_flop = 0.0;
    double seconds_per_byte = 0.0;
    int samples = 0;  // probe measurements it was fitted to
    double seconds(double flops, double bytes) const {
        return overhead_s + flops * seconds_per_flop + bytes * seconds_per_byte;
    }
    friend bool operator==(const KernelRate&, const KernelRate&) = default;
};

struct KernelRates {
    int threads = 0;                          // the thread count they were measured with
    std::map<std::string, KernelRate> kinds;  // by op kind, e.g. "convolution_backward_weights"
    KernelRate matrix;                        // every matrix product (inner products, convolutions)
    KernelRate other;                         // every other kind (element-wise, pooling, updates, ...)

    bool empty() const { return kinds.empty() && matrix.samples == 0 && other.samples == 0; }
    // The kind's own fit, or its family's; `isMatrix` says which family.
    const KernelRate& rateFor(const std::string& kind, bool isMatrix) const;
    friend bool operator==(const KernelRates&, const KernelRates&) = default;
};

}  // namespace trainbench::engine
