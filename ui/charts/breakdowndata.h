#pragma once
// Where step time went, per step and category (input, forward, backward, optimizer,
// communication, other; evaluation and checkpoint when the run had them), and its averages over
// windows of steps: what BreakdownChart stacks. Pure data and arithmetic.
#include <QString>

#include <memory>
#include <vector>

namespace trainbench::ui {

struct BreakdownCategory {
    QString name;                 // "input", "forward", … (known names get fixed colours)
    std::vector<double> seconds;  // one per step, aligned with BreakdownData::steps
};

struct BreakdownData {
    std::vector<double> steps;  // ascending
    std::vector<BreakdownCategory> categories;  // stacked bottom-up in this order
};
using BreakdownDataPtr = std::shared_ptr<const BreakdownData>;

// The mean seconds per step of each category over a run of consecutive steps.
struct BreakdownWindow {
    double xBegin = 0.0;  // the window's first step
    double xEnd = 0.0;    // the next window's first step (for the last: its last step + a step's spacing)
    size_t steps = 0;     // how many steps it averages
    double firstStep = 0.0, lastStep = 0.0;
    std::vector<double> means;  // per category
    double total() const;
};

// Cuts the steps within [xMin, xMax] into at most `windows` runs of (nearly) equal step counts
// and averages each category over each run. When there are fewer steps than windows, every step
// is a window of its own.
std::vector<BreakdownWindow> windowMeans(const BreakdownData& data, double xMin, double xMax, int windows);

}  // namespace trainbench::ui
