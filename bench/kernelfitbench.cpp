#include "bench/kernelfitbench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/emulation/devicetiming.h"
#include "engine/emulation/kernelrates.h"
#include "profiler/machine/cacheprobe.h"
#include "profiler/machine/kernelfit.h"
#include "profiler/machine/kernelprobe.h"
#include "profiler/machine/memoryprobe.h"

namespace trainbench::bench {

namespace {

void printRows(const engine::KernelRates& rates, const std::vector<profiler::KernelSample>& samples, bool byProbe) {
    std::printf("  %-5s %-31s %-26s %9s %8s %8s %10s %10s %7s\n", byProbe ? "probe" : "", "kind", "shape", "MFLOP", "MB",
                "spill", "measured", "fit", "error");
    for (const profiler::KernelSample& s : samples) {
        const double p = profiler::predictedSeconds(rates, s);
        std::printf("  %-5s %-31s %-26.26s %9.2f %8.3f %8.2f %8.1f us %8.1f us %+6.0f%%\n",
                    byProbe ? std::to_string(s.probe + 1).c_str() : "", s.op.cost.kind.c_str(),
                    s.op.cost.shape.c_str(), s.op.cost.flops / 1e6, s.op.cost.bytes / 1e6,
                    engine::spillFraction(rates.cache_bytes, s.working_set_bytes, s.copies), s.seconds * 1e6, p * 1e6,
                    (p / s.seconds - 1) * 100);
    }
}

}  // namespace

int kernelFitBench(const KernelFitBenchOptions& o) {
    const double llc = static_cast<double>(profiler::lastLevelCacheBytes());
    const profiler::CacheCurve cache = profiler::measureCacheCurve(o.threads, o.copies, llc);
    std::printf("streaming sweep, %d thread(s) x %d cop%s side by side (last-level cache %.0f MiB):\n", o.threads,
                o.copies, o.copies == 1 ? "y" : "ies", llc / (1 << 20));
    for (const profiler::CachePoint& p : cache.points) {
        const double spill = engine::spillFraction(cache.effective_cache_bytes, p.bytes_per_copy, cache.copies);
        std::printf("  %7.2f MiB per copy: %6.1f GB/s measured, %6.1f fitted\n", p.bytes_per_copy / (1 << 20),
                    p.gbs_per_copy, cache.cached_gbs / (1 + cache.slowdown * spill));
    }
    std::printf("  effective cache %.1f MiB, bytes beyond it %.2fx as slow\n", cache.effective_cache_bytes / (1 << 20),
                1 + cache.slowdown);
    const profiler::KernelProbes probes = profiler::probeKernels(o.threads, o.copies);
    const std::vector<profiler::KernelSample>& samples = probes.samples;
    engine::KernelRates rates = profiler::fitKernelRates(samples, o.threads, cache.effective_cache_bytes, cache.slowdown);
    profiler::fitStepOverhead(probes.steps, rates);
    std::printf("kernel probes: fit RMS error %.0f %%\n", profiler::relativeError(rates, samples) * 100);
    std::map<int, double> ws;
    for (const auto& s : samples) ws[s.probe] = s.working_set_bytes;
    for (const profiler::ProbeStep& st : probes.steps)
        std::printf("  probe %d: parameters, gradients and state %.1f MB per copy; activations %.1f MB; outside the ops "
                    "%.1f us a step, fitted %.1f us\n",
                    st.probe + 1, ws[st.probe] / 1e6, st.activation_bytes / 1e6, st.outside_s * 1e6,
                    rates.stepOverhead(st.activation_bytes) * 1e6);
    if (o.samples) printRows(rates, samples, true);

    const std::map<std::string, std::string> presets{{"w1", "mlp"}, {"w2", "cnn"}};
    for (const std::string& w : o.check) {
        profiler::ProbeModel model;
        model.layers = engine::presetLayers(presets.at(w));
        model.sample = {1, 28, 28};
        model.batch = o.batch > 0 ? o.batch : 128 / std::max(1, o.copies);
        model.optimizer = engine::OptimizerKind::Adam;
        const profiler::KernelProbes timed = profiler::timeModels({model}, o.threads, o.copies);
        const std::vector<profiler::KernelSample>& ops = timed.samples;
        double measuredStep = 0.0, predictedStep = 0.0;
        for (const auto& s : ops) {
            measuredStep += s.seconds * static_cast<double>(s.op.calls);
            predictedStep += profiler::predictedSeconds(rates, s) * static_cast<double>(s.op.calls);
        }
        const double outside = timed.steps.empty() ? 0.0 : timed.steps.front().outside_s;
        const double outsidePredicted = timed.steps.empty() ? 0.0 : rates.stepOverhead(timed.steps.front().activation_bytes);
        std::printf("\n%s at batch %lld per copy (parameters, gradients and state %.1f MB per copy): kernels %.3f ms "
                    "measured, %.3f ms predicted (%+.1f %%); with the rest of the step %.3f ms, %.3f ms (%+.1f %%)\n",
                    w.c_str(), static_cast<long long>(model.batch), ops.empty() ? 0.0 : ops.front().working_set_bytes / 1e6,
                    measuredStep * 1e3, predictedStep * 1e3, (predictedStep / measuredStep - 1) * 100,
                    (measuredStep + outside) * 1e3, (predictedStep + outsidePredicted) * 1e3,
                    ((predictedStep + outsidePredicted) / (measuredStep + outside) - 1) * 100);
        printRows(rates, ops, false);
    }
    return 0;
}

}  // namespace trainbench::bench
