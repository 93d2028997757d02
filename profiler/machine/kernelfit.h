#pragma once
// Fits the host's kernel rates (engine/emulation/kernelrates.h) to probe measurements (kernelprobe.h):
// for every op kind, and for the matrix-product and other families as a whole, the non-negative
// overhead, seconds per FLOP and seconds per byte that best predict the measured times in relative
// terms (every sample counts alike, whether it took 5 us or 5 ms).
#include <vector>

#include "engine/emulation/kernelrates.h"
#include "profiler/machine/kernelprobe.h"

namespace trainbench::profiler {

// Kinds with fewer than kMinSamplesPerKind samples get only their family's fit.
inline constexpr int kMinSamplesPerKind = 3;

// `cacheBytes` and `spillSlowdown`: the host's effective cache and how much slower bytes beyond it
// are (cacheprobe.h; 0: bytes cost the same wherever they come from). Each sample's bytes are
// weighed by its probe's spill, so that the rates are those of data in the cache.
engine::KernelRates fitKernelRates(const std::vector<KernelSample>& samples, int threads, double cacheBytes = 0.0,
                                   double spillSlowdown = 0.0);

// Fits `rates.step_overhead_s` and `step_overhead_per_activation_byte_s` (non-negative, relative
// least squares) to the probes' time outside their ops.
void fitStepOverhead(const std::vector<ProbeStep>& steps, engine::KernelRates& rates);

// What `rates` predict for one sample, its probe's spill included.
double predictedSeconds(const engine::KernelRates& rates, const KernelSample& sample);

// The root-mean-square relative error of `rates` on `samples` (0.1 = 10 %).
double relativeError(const engine::KernelRates& rates, const std::vector<KernelSample>& samples);

}  // namespace trainbench::profiler
