#pragma once
// Times the engine's own kernels on this host: small probe models, whose shapes are unlike any
// benchmark workload's, train a few steps, and every op they run is timed by the per-op statistics
// and paired with its description by shapes (engine/device/opgraph.h). The samples say how close to
// the roofs each kind of kernel comes here — what the host's cost model (kernelrates.h) is fitted to.
#include <string>
#include <vector>

#include "engine/device/opdesc.h"

namespace trainbench::profiler {

// One op of a probe step: its description by shapes and its measured time per call.
struct KernelSample {
    engine::OpDesc op;
    double seconds = 0.0;  // per call, the median of the probe steps
};

// Runs the probes with `threads` compute threads (binding the calling thread's OpenMP budget, as
// measureRoofs does), `replicas` copies at once on threads of their own, as mirrored replicas or
// the workers of a job share this host: their kernels then run at the rate they get side by side
// (shared cores, caches and memory); the copies meet before every step, as replicas do. The
// samples are the first copy's. Takes about a second per
// copy; anything else running slows the samples down.
std::vector<KernelSample> probeKernels(int threads, int replicas = 1);

}  // namespace trainbench::profiler
