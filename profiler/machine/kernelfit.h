#pragma once
// Fits the host's kernel rates (engine/device/kernelrates.h) to probe measurements (kernelprobe.h):
// for every op kind, and for the matrix-product and other families as a whole, the non-negative
// overhead, seconds per FLOP and seconds per byte that best predict the measured times in relative
// terms (every sample counts alike, whether it took 5 us or 5 ms).
#include <vector>

#include "engine/device/kernelrates.h"
#include "profiler/machine/kernelprobe.h"

namespace trainbench::profiler {

// Kinds with fewer than kMinSamplesPerKind samples get only their family's fit.
inline constexpr int kMinSamplesPerKind = 3;

engine::KernelRates fitKernelRates(const std::vector<KernelSample>& samples, int threads);

// The root-mean-square relative error of `rates` on `samples` (0.1 = 10 %).
double relativeError(const engine::KernelRates& rates, const std::vector<KernelSample>& samples);

}  // namespace trainbench::profiler
