#pragma once
// Times the engine's own kernels on this host: small probe models, whose shapes are unlike any
// benchmark workload's, train a few steps, and every op they run is timed by the per-op statistics
// and paired with its description by shapes (engine/emulation/opgraph.h). The samples say how close to
// the roofs each kind of kernel comes here — what the host's cost model (kernelrates.h) is fitted to.
#include <string>
#include <vector>

#include "engine/device/opdesc.h"
#include "engine/model/modelspec.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/tensor/tensor.h"

namespace trainbench::profiler {

// One op of a probe step: its description by shapes and its measured time per call.
struct KernelSample {
    engine::OpDesc op;
    double seconds = 0.0;  // per call, the median of the probe steps
    int probe = 0;         // which probe model it came from (0-based)
    // The probe's parameters, gradients and optimizer state, one copy (OpGraph's footprint without
    // the activations), and how many copies ran side by side: what the caches had to hold from one
    // step to the next (engine/emulation/kernelrates.h).
    double working_set_bytes = 0.0;
    int copies = 1;
};

// A probe step's time outside the ops of its graph (the loss, layout reorders of activations, the
// strategy's own work), the median step.
struct ProbeStep {
    int probe = 0;
    double activation_bytes = 0.0;  // the step's activations (OpGraph's), one copy
    double outside_s = 0.0;
    int copies = 1;
};

struct KernelProbes {
    std::vector<KernelSample> samples;
    std::vector<ProbeStep> steps;  // one per model
};

// A model trained a few steps to time its kernels: a probe, or a workload checked against the fit.
struct ProbeModel {
    std::vector<engine::LayerSpec> layers;
    engine::Dims sample;
    int64_t batch = 0;  // per copy
    engine::OptimizerKind optimizer = engine::OptimizerKind::Adam;
};

// The probe models, in the order their samples' `probe` index counts.
std::vector<ProbeModel> probeModels();

// Times every op of each model as probeKernels does (`copies` side by side, meeting before every step).
KernelProbes timeModels(const std::vector<ProbeModel>& models, int threads, int copies = 1);

// Runs the probes with `threads` compute threads (binding the calling thread's OpenMP budget, as
// measureRoofs does), `replicas` copies at once on threads of their own, as mirrored replicas or
// the workers of a job share this host: their kernels then run at the rate they get side by side
// (shared cores, caches and memory); the copies meet before every step, as replicas do. The
// samples are the first copy's. Takes about a second per
// copy; anything else running slows the samples down.
KernelProbes probeKernels(int threads, int replicas = 1);

}  // namespace trainbench::profiler
