// data.fraction and data.subset_seed in experiment files: the range and type errors name the key
// path, the values reach DataConfig, a run records its fraction, and the shipped data-scaling sweep
// expands into its six fractions.
#include <gtest/gtest.h>

#include "app/experiment/experiment.h"
#include "app/experiment/sweep.h"
#include "tests/app/experimenttesting.h"

namespace trainbench::app {
namespace {

using testing::issuesOf;
using testing::withModel;

TEST(DataFraction, OutOfRangeOrWrongTypeNamesTheKeyPath) {
    for (const char* bad : {"0", "1.5", "-0.25"}) {
        SCOPED_TRACE(bad);
        const auto issues = issuesOf(withModel(std::string(R"("data": {"fraction": )") + bad + "},"));
        ASSERT_EQ(issues.size(), 1u);
        EXPECT_EQ(issues[0].where, "data.fraction");
        EXPECT_EQ(issues[0].message, std::string("must be > 0 and <= 1, got ") + bad);
    }
    auto issues = issuesOf(withModel(R"("data": {"fraction": "half"},)"));
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "data.fraction");
    issues = issuesOf(withModel(R"("data": {"subset_seed": -1},)"));
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "data.subset_seed");
    issues = issuesOf(withModel(), {"data.fraction=2"});
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_NE(issues[0].where.find("data.fraction"), std::string::npos) << issues[0].where;
}

TEST(DataFraction, ValuesReachTheDataConfigAndTheDefaultIsAll) {
    const Experiment all = parseExperiment(withModel(), "t.json");
    EXPECT_EQ(all.data.fraction, 1.0);
    EXPECT_EQ(all.data.subset_seed, 0u);
    EXPECT_EQ(all.resolved["data"]["fraction"], 1.0);
    const Experiment part = parseExperiment(withModel(R"("data": {"fraction": 0.0625, "subset_seed": 7},)"), "t.json");
    EXPECT_EQ(part.data.fraction, 0.0625);
    EXPECT_EQ(part.data.subset_seed, 7u);
}

TEST(DataFraction, TheShippedSweepRunsSixFractionsOfOneExperiment) {
    const auto points = loadSweepFile(std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-data-scaling.json");
    ASSERT_EQ(points.size(), 6u);
    EXPECT_EQ(points[0].name, "fmnist-data-scaling-fraction0.03125");
    EXPECT_EQ(points[5].name, "fmnist-data-scaling-fraction1");
    const double expected[] = {1.0 / 32, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1.0};
    for (size_t i = 0; i < points.size(); ++i) {
        EXPECT_EQ(points[i].experiment.data.fraction, expected[i]) << points[i].name;
        EXPECT_EQ(points[i].experiment.train.seed, points[0].experiment.train.seed) << "one seed: only the data differs";
        EXPECT_GT(points[i].experiment.train.eval_every_steps, 0) << "the error is measured";
    }
}

}  // namespace
}  // namespace trainbench::app
