#include "profiler/machine/kernelfit.h"

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace trainbench::profiler {

namespace {

constexpr int kTerms = 3;  // overhead, per FLOP, per byte
constexpr unsigned kPerFlop = 1u << 1, kPerByte = 1u << 2;
using Vec = std::array<double, kTerms>;

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

Vec featuresOf(const KernelSample& s, const Cache& cache) {
    return {1.0, s.op.cost.flops, s.op.cost.bytes * cache.factor(s)};
}

// Least squares of sum_i ((x . f_i) / t_i - 1)^2 over the terms in `active` (the others held at 0),
// by the normal equations on scaled columns; nullopt when they are singular.
std::optional<Vec> solve(const std::vector<KernelSample>& samples, unsigned active, const Cache& cache) {
    std::array<int, kTerms> index{};
    int n = 0;
    for (int j = 0; j < kTerms; ++j)
        if (active & (1u << j)) index[static_cast<size_t>(n++)] = j;
    // Columns are scaled to unit size so that FLOPs (1e9) and the constant (1) stay well conditioned.
    std::array<double, kTerms> scale{};
    for (int a = 0; a < n; ++a) {
        double s = 0.0;
        for (const KernelSample& k : samples) s = std::max(s, featuresOf(k, cache)[static_cast<size_t>(index[static_cast<size_t>(a)])] / k.seconds);
        scale[static_cast<size_t>(a)] = s > 0 ? s : 1.0;
    }
    double m[kTerms][kTerms + 1] = {};
    for (const KernelSample& k : samples) {
        const Vec f = featuresOf(k, cache);
        for (int a = 0; a < n; ++a) {
            const double fa = f[static_cast<size_t>(index[static_cast<size_t>(a)])] / k.seconds / scale[static_cast<size_t>(a)];
            for (int b = 0; b < n; ++b)
                m[a][b] += fa * f[static_cast<size_t>(index[static_cast<size_t>(b)])] / k.seconds / scale[static_cast<size_t>(b)];
            m[a][n] += fa;  // the target: t_i / t_i = 1
        }
    }
    // Gaussian elimination with partial pivoting.
    for (int c = 0; c < n; ++c) {
        int pivot = c;
        for (int r = c + 1; r < n; ++r)
            if (std::fabs(m[r][c]) > std::fabs(m[pivot][c])) pivot = r;
        if (std::fabs(m[pivot][c]) < 1e-12) return std::nullopt;
        for (int j = 0; j <= n; ++j) std::swap(m[c][j], m[pivot][j]);
        for (int r = 0; r < n; ++r) {
            if (r == c) continue;
            const double factor = m[r][c] / m[c][c];
            for (int j = c; j <= n; ++j) m[r][j] -= factor * m[c][j];
        }
    }
    Vec x{};
    for (int a = 0; a < n; ++a) x[static_cast<size_t>(index[static_cast<size_t>(a)])] = m[a][n] / m[a][a] / scale[static_cast<size_t>(a)];
    return x;
}

double residual(const std::vector<KernelSample>& samples, const Vec& x, const Cache& cache) {
    double sum = 0.0;
    for (const KernelSample& k : samples) {
        const Vec f = featuresOf(k, cache);
        const double predicted = x[0] * f[0] + x[1] * f[1] + x[2] * f[2];
        sum += std::pow(predicted / k.seconds - 1.0, 2);
    }
    return sum;
}

// Non-negative least squares with three terms: the best of every subset's unconstrained solution
// that is non-negative (the optimum is one of them). `required` is the term a kind's time must grow
// with (FLOPs for matrix products, bytes for the rest): without it a few noisy probes could fit a
// model that extrapolates to large shapes as if they were free.
engine::KernelRate fit(const std::vector<KernelSample>& samples, unsigned required, const Cache& cache) {
    engine::KernelRate best;
    best.samples = static_cast<int>(samples.size());
    if (samples.empty()) return best;
    double bestResidual = std::numeric_limits<double>::infinity();
    for (unsigned active = 1; active < (1u << kTerms); ++active) {
        if (!(active & required)) continue;
        const std::optional<Vec> x = solve(samples, active, cache);
        if (!x || (*x)[0] < 0 || (*x)[1] < 0 || (*x)[2] < 0) continue;
        const double r = residual(samples, *x, cache);
        if (r < bestResidual) {
            bestResidual = r;
            best.overhead_s = (*x)[0];
            best.seconds_per_flop = (*x)[1];
            best.seconds_per_byte = (*x)[2];
        }
    }
    return best;
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
    rates.step_overhead_s = 0.0;
    rates.step_overhead_per_activation_byte_s = 0.0;
    // Minimise sum ((a + b x activation bytes) / t - 1)^2 over a, b >= 0: the joint solution when both are
    // non-negative, else the better of each alone.
    double s11 = 0, s12 = 0, s22 = 0, s1 = 0, s2 = 0;
    for (const ProbeStep& st : steps) {
        if (!(st.outside_s > 0)) continue;
        const double f1 = 1.0 / st.outside_s, f2 = st.activation_bytes / st.outside_s;
        s11 += f1 * f1;
        s12 += f1 * f2;
        s22 += f2 * f2;
        s1 += f1;
        s2 += f2;
    }
    if (!(s11 > 0)) return;
    auto residual = [&](double a, double b) {
        double sum = 0.0;
        for (const ProbeStep& st : steps)
            if (st.outside_s > 0) sum += std::pow((a + b * st.activation_bytes) / st.outside_s - 1.0, 2);
        return sum;
    };
    const double det = s11 * s22 - s12 * s12;
    double a = s1 / s11, b = 0.0;  // the fixed term alone
    if (const double onlyB = s2 / s22; residual(0.0, onlyB) < residual(a, b)) {
        a = 0.0;
        b = onlyB;
    }
    if (det > 1e-12 * s11 * s22) {
        const double ja = (s1 * s22 - s2 * s12) / det, jb = (s11 * s2 - s12 * s1) / det;
        if (ja >= 0 && jb >= 0 && residual(ja, jb) < residual(a, b)) {
            a = ja;
            b = jb;
        }
    }
    rates.step_overhead_s = a;
    rates.step_overhead_per_activation_byte_s = b;
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
