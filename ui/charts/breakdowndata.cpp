#include "ui/charts/breakdowndata.h"

#include <algorithm>
#include <numeric>

namespace trainbench::ui {

double BreakdownWindow::total() const { return std::accumulate(means.begin(), means.end(), 0.0); }

std::vector<BreakdownWindow> windowMeans(const BreakdownData& data, double xMin, double xMax, int windows) {
    std::vector<BreakdownWindow> out;
    if (xMax < xMin) std::swap(xMin, xMax);
    const auto& steps = data.steps;
    const size_t begin = size_t(std::lower_bound(steps.begin(), steps.end(), xMin) - steps.begin());
    const size_t end = size_t(std::upper_bound(steps.begin(), steps.end(), xMax) - steps.begin());
    if (begin >= end || windows < 1) return out;
    const size_t n = end - begin;
    const size_t count = std::min(n, size_t(windows));
    out.reserve(count);
    for (size_t w = 0; w < count; ++w) {
        const size_t i0 = begin + w * n / count;
        const size_t i1 = begin + (w + 1) * n / count;
        BreakdownWindow win;
        win.steps = i1 - i0;
        win.firstStep = steps[i0];
        win.lastStep = steps[i1 - 1];
        win.xBegin = steps[i0];
        win.xEnd = i1 < end ? steps[i1] : steps[i1 - 1];  // the last one is set below
        win.means.reserve(data.categories.size());
        for (const BreakdownCategory& c : data.categories) {
            double sum = 0.0;
            const size_t upTo = std::min(i1, c.seconds.size());
            for (size_t i = i0; i < upTo; ++i) sum += c.seconds[i];
            win.means.push_back(sum / double(win.steps));
        }
        out.push_back(std::move(win));
    }
    // The last window ends one (mean) step spacing after its last step, like the others do.
    const double spacing = n > 1 ? (steps[end - 1] - steps[begin]) / double(n - 1) : 1.0;
    out.back().xEnd = out.back().lastStep + spacing;
    return out;
}

}  // namespace trainbench::ui
