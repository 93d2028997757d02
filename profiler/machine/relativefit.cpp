#include "profiler/machine/relativefit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace trainbench::profiler {

namespace {

// Least squares over the columns in `active` (the others held at 0), by the normal equations on
// columns scaled to unit size (so that FLOPs, 1e9, and a constant, 1, stay well conditioned);
// nullopt when they are singular.
std::optional<std::vector<double>> solve(const std::vector<std::vector<double>>& rows, const std::vector<double>& targets,
                                         size_t columns, unsigned active) {
    std::vector<size_t> index;
    for (size_t j = 0; j < columns; ++j)
        if (active & (1u << j)) index.push_back(j);
    const size_t n = index.size();
    std::vector<double> scale(n, 1.0);
    for (size_t a = 0; a < n; ++a) {
        double s = 0.0;
        for (size_t i = 0; i < rows.size(); ++i)
            if (targets[i] > 0) s = std::max(s, rows[i][index[a]] / targets[i]);
        if (s > 0) scale[a] = s;
    }
    std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0.0));
    for (size_t i = 0; i < rows.size(); ++i) {
        if (!(targets[i] > 0)) continue;
        for (size_t a = 0; a < n; ++a) {
            const double fa = rows[i][index[a]] / targets[i] / scale[a];
            for (size_t b = 0; b < n; ++b) m[a][b] += fa * rows[i][index[b]] / targets[i] / scale[b];
            m[a][n] += fa;  // the target: t_i / t_i = 1
        }
    }
    // Gaussian elimination with partial pivoting.
    for (size_t c = 0; c < n; ++c) {
        size_t pivot = c;
        for (size_t r = c + 1; r < n; ++r)
            if (std::fabs(m[r][c]) > std::fabs(m[pivot][c])) pivot = r;
        if (std::fabs(m[pivot][c]) < 1e-12) return std::nullopt;
        std::swap(m[c], m[pivot]);
        for (size_t r = 0; r < n; ++r) {
            if (r == c) continue;
            const double factor = m[r][c] / m[c][c];
            for (size_t j = c; j <= n; ++j) m[r][j] -= factor * m[c][j];
        }
    }
    std::vector<double> x(columns, 0.0);
    for (size_t a = 0; a < n; ++a) x[index[a]] = m[a][n] / m[a][a] / scale[a];
    return x;
}

}  // namespace

RelativeFit nonNegativeRelativeFit(const std::vector<std::vector<double>>& rows, const std::vector<double>& targets,
                                   unsigned required) {
    const size_t columns = rows.empty() ? 0 : rows.front().size();
    if (columns > 8) throw std::invalid_argument("nonNegativeRelativeFit: at most 8 columns");
    RelativeFit best;
    best.x.assign(columns, 0.0);
    best.residual = std::numeric_limits<double>::infinity();
    for (unsigned active = 1; active < (1u << columns); ++active) {
        if (!(active & required)) continue;
        const std::optional<std::vector<double>> x = solve(rows, targets, columns, active);
        if (!x || std::any_of(x->begin(), x->end(), [](double v) { return v < 0; })) continue;
        double residual = 0.0;
        for (size_t i = 0; i < rows.size(); ++i) {
            if (!(targets[i] > 0)) continue;
            double predicted = 0.0;
            for (size_t j = 0; j < columns; ++j) predicted += (*x)[j] * rows[i][j];
            residual += std::pow(predicted / targets[i] - 1.0, 2);
        }
        if (residual < best.residual) {
            best.x = *x;
            best.residual = residual;
            best.found = true;
        }
    }
    if (!best.found) best.residual = 0.0;
    return best;
}

}  // namespace trainbench::profiler
