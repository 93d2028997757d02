#pragma once
// `trainbench-bench kernel-fit`: the host model's kernel probes and fit (profiler/machine/kernelfit.h)
// sample by sample, and W1 / W2 timed the same way against the fit's prediction, op by op: where
// the emulator configured as this host (device.type "cpu-host") gains or loses its step time.
#include <string>
#include <vector>

namespace trainbench::bench {

struct KernelFitBenchOptions {
    int threads = 1;                       // per copy
    int copies = 1;                        // side by side, as mirrored replicas or workers
    std::vector<std::string> check{"w1", "w2"};  // workloads timed against the fit
    int64_t batch = 0;                     // per copy (0: 128 / copies, as a global batch of 128 splits)
    bool samples = true;                   // print every probe sample
};

int kernelFitBench(const KernelFitBenchOptions& options);

}  // namespace trainbench::bench
