#pragma once
// Data scaling across compared runs: test error (1 - best test accuracy) or the final test loss
// against the examples trained on (runs.train_examples), one curve per family of runs that differ
// only in data.fraction and seed. The runs of a family at one size make one point, their mean with
// min and max; each curve with three sizes or more gets a power law fitted to its runs. What the
// GUI's Compare page, the report and `trainbench-cli report --data-scaling` show.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/evalsample.h"
#include "profiler/compare/powerlaw.h"
#include "profiler/store/runrow.h"

namespace trainbench::profiler {

enum class DataScalingMetric { TestError, TestLoss };

// "test error" or "test loss".
const char* metricName(DataScalingMetric metric);

// One run's figures, as the curves need them.
struct DataScalingRun {
    int64_t id = 0;
    std::string name;
    std::string family;               // the experiment without name, description, seed and data.fraction
    bool completed = false;           // only finished runs have an error at their size
    std::optional<int64_t> examples;  // runs.train_examples
    std::optional<double> fraction;   // runs.data_fraction
    std::optional<double> error;      // 1 - runs.best_accuracy
    std::optional<double> test_loss;  // the last test evaluation's loss
};

// From a run's row and its evaluations (only the "test" split is used).
DataScalingRun dataScalingRun(const RunRow& run, const std::vector<EvalSample>& evals);

struct DataScalingPoint {
    int64_t examples = 0;
    std::optional<double> fraction;  // the runs' data.fraction, when they recorded one
    double mean = 0.0, min = 0.0, max = 0.0;
    std::vector<int64_t> runs;       // run ids, in the order given
};

struct DataScalingCurve {
    std::string label;                     // the runs' name without its -fraction / -seed parts
    std::vector<DataScalingPoint> points;  // ascending examples
    std::optional<PowerLawFit> fit;        // of every run's value against its examples
};

struct DataScaling {
    DataScalingMetric metric = DataScalingMetric::TestError;
    bool differs = false;                  // some runs were trained on different numbers of examples
    std::vector<DataScalingCurve> curves;  // those with two sizes or more, in the order of their first run
};

DataScaling dataScalingOf(const std::vector<DataScalingRun>& runs, DataScalingMetric metric);

// One line on a fit, the same in the GUI, the report and the CLI: "test error ≈ 1.53 × examples^-0.212
// (R² 0.981 over 6 runs): doubling the examples leaves 86.3 % of it".
std::string describeFit(const PowerLawFit& fit, DataScalingMetric metric);

}  // namespace trainbench::profiler
