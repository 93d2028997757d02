#pragma once
// How long this host's kernels take, kind by kind: the cost model of the emulated device "cpu-host"
// once the profiler has calibrated it (profiler/machine/kernelfit.h). A CPU kernel does not overlap
// its arithmetic with its memory traffic the way a roofline's max() assumes, and small shapes pay
// fixed costs (packing, threading), so each kind is fitted to probe measurements as
//   seconds = overhead + FLOPs x seconds per FLOP + bytes x seconds per byte
// with non-negative coefficients. Kinds the probes never ran fall back to their family's fit.
// Bytes cost more when the step's data no longer fits the caches. The ops that touch the parameters
// (matrix products read weights and write their gradients; optimizer updates stream parameters,
// gradients and state) find them where the previous step left them, a whole step ago, so their
// bytes count
//   bytes x (1 + slowdown x spill fraction)
// where the spill fraction is the part of the parameters, gradients and optimizer state of all
// copies side by side (mirrored replicas, the workers of a job on this host) beyond the effective
// cache; the effective cache and the slowdown are the host's, from a streaming sweep
// (profiler/machine/cacheprobe.h). Activations are reused last-in first-out (backward reads the
// latest first) and are left out.
#include <map>
#include <string>

namespace trainbench::engine {

// The part of `copies` working sets of `workingSetBytes` each that a cache of `cacheBytes` cannot
// hold: 0 while they fit (or when cacheBytes is 0), then 1 - cache / (copies x working set).
double spillFraction(double cacheBytes, double workingSetBytes, int copies);

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
    int copies = 1;                           // steps side by side while they were measured
    std::map<std::string, KernelRate> kinds;  // by op kind, e.g. "convolution_backward_weights"
    KernelRate matrix;                        // every matrix product (inner products, convolutions)
    KernelRate other;                         // every other kind (element-wise, pooling, updates, ...)
    // What a step spends outside its graph's ops (the loss, layout reorders of activations, the
    // strategy's own work): fixed + per byte of the step's activations (one replica).
    double step_overhead_s = 0.0;
    double step_overhead_per_activation_byte_s = 0.0;
    double cache_bytes = 0.0;                 // effective cache the copies share (0: not modelled)
    double spill_slowdown = 0.0;              // bytes beyond it take (1 + this) times as long

    bool empty() const { return kinds.empty() && matrix.samples == 0 && other.samples == 0; }
    // The kind's own fit, or its family's; `isMatrix` says which family.
    const KernelRate& rateFor(const std::string& kind, bool isMatrix) const;
    // What the bytes of an op that touches the parameters are multiplied by in a step whose
    // parameters, gradients and optimizer state (one copy) are `workingSetBytes`, with
    // `copiesSideBySide` such steps sharing the cache (by default the copies it was measured with).
    double byteFactor(double workingSetBytes, int copiesSideBySide) const {
        return 1.0 + spill_slowdown * engine::spillFraction(cache_bytes, workingSetBytes, copiesSideBySide);
    }
    double byteFactor(double workingSetBytes) const { return byteFactor(workingSetBytes, copies); }
    double stepOverhead(double activationBytes) const {
        return step_overhead_s + step_overhead_per_activation_byte_s * activationBytes;
    }
    friend bool operator==(const KernelRates&, const KernelRates&) = default;
};

}  // namespace trainbench::engine
