#pragma once
// Non-negative least squares in relative error, for the host model's small fits (kernel rates, the
// cache curve, the step's time outside its ops): every measurement counts alike, whether it took
// 5 us or 5 ms.
#include <vector>

namespace trainbench::profiler {

struct RelativeFit {
    std::vector<double> x;  // one coefficient per column, >= 0; all 0 when nothing was found
    double residual = 0.0;  // sum of squared relative errors
    bool found = false;
};

// The x >= 0 minimising sum_i ((rows_i . x) / targets_i - 1)^2, found as the best non-negative
// unconstrained solution over the subsets of columns that include at least one column of the
// bitmask `required` (the optimum is among them). Rows whose target is not positive are left out.
// At most 8 columns.
RelativeFit nonNegativeRelativeFit(const std::vector<std::vector<double>>& rows, const std::vector<double>& targets,
                                   unsigned required);

}  // namespace trainbench::profiler
