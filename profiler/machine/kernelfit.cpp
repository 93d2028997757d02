#include "profiler/machine/kernelfit.h"

#include <cmath>
#include <map>

#include "profiler/machine/relativefit.h"

namespace trainbench::profiler {

namespace {

// The terms of a kind's time: overhead, per FLOP, per byte.
constexpr unsigned kPerFlop = 1u << 1, kPerByte = 1u << 2;

// The host's cache: a sample's bytes weigh more when it touches the parameters and its probe's
// parameters, gradients and optimizer state spilled from the cache (kernelrates.h).
struct Cache {
    double bytes = 0.0;
    double slowdown = 0.0;
    double factor(const KernelSample& s) const {
        if (!engine::touchesParameters(s.op)) return 1.0;
        return 1.0 + slowdown * engine::spillFraction(bytes, s.working_set_bytes, s.copies);
    }
};

// Non-negative, in relative error. `required` is the term a kind's time must grow with (FLOPs for
// matrix products, bytes for the rest): without it a few noisy probes could fit a model that
// extrapolates to large shapes as if they were free.
engine::KernelRate fit(const std::vector<KernelSample>& samples, unsigned required, const Cache& cache) {
    std::vector<std::vector<double>> rows;
    std::vector<double> seconds;
    for (const KernelSample& k : samples) {
        rows.push_back({1.0, k.op.cost.flops, k.op.cost.bytes * cache.factor(k)});
        seconds.push_back(k.seconds);
    }
    engine::KernelRate rate;
    rate.samples = static_cast<int>(samples.size());
    if (samples.empty()) return rate;
    const RelativeFit f = nonNegativeRelativeFit(rows, seconds, required);
    rate.overhead_s = f.x[0];
    rate.seconds_per_flop = f.x[1];
    rate.seconds_per_byte = f.x[2];
    return rate;
}

}  // namespace

engine::KernelRates fitKernelRates(const std::vector<KernelSample>& samples, int threads, double cacheBytes,
                                   double spillSlowdown) {
    const Cache cache{cacheBytes, spillSlowdown};
    engine::KernelRates rates;
    rates.threads = threads;
    rates.copies = samples.empty() ? 1 : samples.front().copies;
    rates.cache_bytes = cacheBytes;
    rates.spill_slowdown = spillSlowdown;
    std::map<std::string, std::vector<KernelSample>> byKind;
    std::vector<KernelSample> matrix, other;
    for (const KernelSample& s : samples) {
        if (!(s.seconds > 0)) continue;
        byKind[s.op.cost.kind].push_back(s);
        (s.op.matrix.empty() ? other : matrix).push_back(s);
    }
    rates.matrix = fit(matrix, kPerFlop, cache);
    rates.other = fit(other, kPerByte, cache);
    for (const auto& [kind, list] : byKind)
        if (static_cast<int>(list.size()) >= kMinSamplesPerKind)
            rates.kinds[kind] = fit(list, list.front().op.matrix.empty() ? kPerByte : kPerFlop, cache);
    return rates;
}

void fitStepOverhead(const std::vector<ProbeStep>& steps, engine::KernelRates& rates) {
    std::vector<std::vector<double>> rows;
    std::vector<double> outside;
    for (const ProbeStep& st : steps) {
        rows.push_back({1.0, st.activation_bytes});
        outside.push_back(st.outside_s);
    }
    const RelativeFit f = nonNegativeRelativeFit(rows, outside, 0b11u);
    rates.step_overhead_s = f.found ? f.x[0] : 0.0;
    rates.step_overhead_per_activation_byte_s = f.found ? f.x[1] : 0.0;
}

double predictedSeconds(const engine::KernelRates& rates, const KernelSample& s) {
    const double factor = engine::touchesParameters(s.op) ? rates.byteFactor(s.working_set_bytes, s.copies) : 1.0;
    return rates.rateFor(s.op.cost.kind, !s.op.matrix.empty()).seconds(s.op.cost.flops, s.op.cost.bytes * factor);
}

double relativeError(const engine::KernelRates& rates, const std::vector<KernelSample>& samples) {
    double sum = 0.0;
    int n = 0;
    for (const KernelSample& s : samples) {
        if (!(s.seconds > 0)) continue;
        const double predicted = predictedSeconds(rates, s);
        sum += std::pow(predicted / s.seconds - 1.0, 2);
        ++n;
    }
    return n ? std::sqrt(sum / n) : 0.0;
}

}  // namespace trainbench::profiler
