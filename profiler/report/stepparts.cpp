#include "profiler/report/stepparts.h"

#include <algorithm>

namespace trainbench::profiler {

std::optional<MeanStep> meanStep(const std::vector<StepSample>& steps) {
    if (steps.empty()) return std::nullopt;
    const size_t skip = steps.size() > 40 ? std::min<size_t>(20, steps.size() / 10) : 0;
    MeanStep m;
    m.firstStep = steps[skip].step;
    m.lastStep = steps.back().step;
    for (size_t i = skip; i < steps.size(); ++i) {
        m.stepSeconds += steps[i].step_seconds;
        for (size_t k = 0; k < kStepParts.size(); ++k) m.partSeconds[k] += steps[i].*kStepParts[k].seconds;
    }
    const double n = static_cast<double>(steps.size() - skip);
    m.stepSeconds /= n;
    for (double& s : m.partSeconds) s /= n;
    return m;
}

}  // namespace trainbench::profiler
