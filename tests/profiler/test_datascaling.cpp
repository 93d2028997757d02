// Data scaling across compared runs: families (runs differing only in data.fraction and seed),
// points as mean/min/max per size, runs that cannot count left out, and the power-law fit against
// values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "profiler/compare/datascaling.h"
#include "profiler/compare/powerlaw.h"

namespace trainbench::profiler {
namespace {

RunRow row(int64_t id, const std::string& name, double fraction, int seed, int64_t examples, std::optional<double> best,
           const std::string& model = "logreg") {
    RunRow r;
    r.id = RunId{id};
    r.name = name;
    r.status = RunStatus::Completed;
    r.config_json = R"({"name": ")" + name + R"(", "seed": )" + std::to_string(seed) +
                    R"(, "data": {"dataset": "fashion-mnist", "fraction": )" + std::to_string(fraction) +
                    R"(}, "model": {"preset": ")" + model + R"("}})";
    r.train_examples = examples;
    r.data_fraction = fraction;
    r.best_accuracy = best;
    return r;
}

EvalSample eval(const std::string& split, double loss) {
    EvalSample e;
    e.split = split;
    e.loss = loss;
    return e;
}

TEST(PowerLaw, RecoversAnExactLawAndItsRSquared) {
    // y = 3 x^-0.5 exactly: slope -0.5, coefficient 3, every point on the line.
    const auto f = fitPowerLaw({{100, 0.3}, {400, 0.15}, {1600, 0.075}});
    ASSERT_TRUE(f);
    EXPECT_NEAR(f->slope, -0.5, 1e-12);
    EXPECT_NEAR(f->coefficient, 3.0, 1e-9);
    EXPECT_NEAR(f->r2, 1.0, 1e-12);
    EXPECT_NEAR(f->perDoubling(), 1 / std::sqrt(2.0), 1e-12);
    EXPECT_NEAR(f->at(10000), 0.03, 1e-12);
}

TEST(PowerLaw, LeastSquaresOnLogsAgainstAHandWorkedExample) {
    // ln x = 0, 1, 2 (x = 1, e, e^2); ln y = 0, -1, -1.5. Mean ln x 1, mean ln y -5/6;
    // Sxy = (-1)(5/6) + 0 + (1)(-2/3) = -1.5, Sxx = 2: slope -0.75, intercept -5/6 + 0.75 = -1/12.
    // Residuals: 0 - (-1/12 + 0) = 1/12, -1 - (-1/12 - 0.75) = -1/6, -1.5 - (-1/12 - 1.5) = 1/12;
    // SSres = 1/144 + 4/144 + 1/144 = 1/24; SStot = (5/6)^2 + (1/6)^2 + (2/3)^2 = 7/6: R^2 = 1 - 1/28.
    const double e = std::exp(1.0);
    const auto f = fitPowerLaw({{1, 1}, {e, std::exp(-1.0)}, {e * e, std::exp(-1.5)}});
    ASSERT_TRUE(f);
    EXPECT_NEAR(f->slope, -0.75, 1e-12);
    EXPECT_NEAR(f->coefficient, std::exp(-1.0 / 12), 1e-12);
    EXPECT_NEAR(f->r2, 1.0 - 1.0 / 28, 1e-12);
    EXPECT_EQ(f->points, 3);
}

TEST(PowerLaw, NeedsThreeSizesAndPositiveValues) {
    EXPECT_FALSE(fitPowerLaw({{100, 0.3}, {200, 0.2}}));
    EXPECT_FALSE(fitPowerLaw({{100, 0.3}, {100, 0.2}, {100, 0.25}, {200, 0.2}}));
    EXPECT_FALSE(fitPowerLaw({{100, 0.3}, {200, 0.0}, {400, 0.1}})) << "a zero error has no logarithm";
    EXPECT_TRUE(fitPowerLaw({{100, 0.3}, {200, 0.0}, {400, 0.1}, {800, 0.05}}));
}

TEST(DataScaling, OneCurvePerFamilyWithSeedsAsSpread) {
    std::vector<DataScalingRun> runs;
    // The logreg sweep: three sizes, two seeds each.
    const int64_t n[] = {1875, 7500, 30000};
    const double f[] = {0.03125, 0.125, 0.5};
    const double acc[3][2] = {{0.70, 0.74}, {0.80, 0.82}, {0.85, 0.85}};
    int64_t id = 1;
    for (int i = 0; i < 3; ++i)
        for (int s = 0; s < 2; ++s) {
            const std::string name = "sweep-fraction" + std::to_string(f[i]).substr(0, 7) + "-seed" + std::to_string(s + 1);
            runs.push_back(dataScalingRun(row(id++, name, f[i], s + 1, n[i], acc[i][s]), {}));
        }
    // Another model: its own curve.
    runs.push_back(dataScalingRun(row(id++, "mlp-fraction0.03125", 0.03125, 1, 1875, 0.72, "mlp"), {}));
    runs.push_back(dataScalingRun(row(id++, "mlp-fraction0.5", 0.5, 1, 30000, 0.88, "mlp"), {}));
    // Not counted: a failed run, a run that never evaluated, a run with no recorded size.
    RunRow failed = row(id++, "sweep-fraction0.25", 0.25, 1, 15000, 0.5);
    failed.status = RunStatus::Failed;
    runs.push_back(dataScalingRun(failed, {}));
    runs.push_back(dataScalingRun(row(id++, "sweep-fraction0.25-seed1", 0.25, 1, 15000, std::nullopt), {}));
    RunRow old = row(id++, "sweep-fraction0.25-seed2", 0.25, 2, 15000, 0.8);
    old.train_examples.reset();
    runs.push_back(dataScalingRun(old, {}));

    const DataScaling d = dataScalingOf(runs, DataScalingMetric::TestError);
    EXPECT_TRUE(d.differs);
    ASSERT_EQ(d.curves.size(), 2u);
    const DataScalingCurve& c = d.curves[0];
    EXPECT_EQ(c.label, "sweep");
    ASSERT_EQ(c.points.size(), 3u);
    EXPECT_EQ(c.points[0].examples, 1875);
    EXPECT_NEAR(c.points[0].mean, 0.28, 1e-12);
    EXPECT_NEAR(c.points[0].min, 0.26, 1e-12);
    EXPECT_NEAR(c.points[0].max, 0.30, 1e-12);
    EXPECT_EQ(c.points[0].runs, (std::vector<int64_t>{1, 2}));
    EXPECT_DOUBLE_EQ(*c.points[0].fraction, 0.03125);
    EXPECT_NEAR(c.points[2].mean, 0.15, 1e-12);
    ASSERT_TRUE(c.fit);
    EXPECT_EQ(c.fit->points, 6);  // every run, not the means
    EXPECT_LT(c.fit->slope, -0.2);
    EXPECT_GT(c.fit->slope, -0.3);
    EXPECT_EQ(d.curves[1].label, "mlp");
    EXPECT_FALSE(d.curves[1].fit) << "two sizes are a line, not a fit";
}

TEST(DataScaling, TestLossIsTheLastTestEvaluation) {
    const DataScalingRun a = dataScalingRun(row(1, "a", 0.5, 1, 100, 0.8), {eval("test", 0.9), eval("train", 0.1), eval("test", 0.6)});
    EXPECT_DOUBLE_EQ(*a.test_loss, 0.6);
    const DataScalingRun b = dataScalingRun(row(2, "a", 1.0, 1, 200, 0.9), {eval("test", 0.4)});
    const DataScaling d = dataScalingOf({a, b}, DataScalingMetric::TestLoss);
    ASSERT_EQ(d.curves.size(), 1u);
    EXPECT_DOUBLE_EQ(d.curves[0].points[0].mean, 0.6);
    EXPECT_DOUBLE_EQ(d.curves[0].points[1].mean, 0.4);
}

TEST(DataScaling, RunsOfOneSizeDoNotDiffer) {
    const DataScaling d = dataScalingOf({dataScalingRun(row(1, "a", 1, 1, 60000, 0.8), {}),
                                         dataScalingRun(row(2, "a", 1, 2, 60000, 0.81), {})},
                                        DataScalingMetric::TestError);
    EXPECT_FALSE(d.differs);
    EXPECT_TRUE(d.curves.empty());
}

}  // namespace
}  // namespace trainbench::profiler
