// plan-serving's search: the quick search finds at least 95 % of the exhaustive search's best (by
// cost per million predictions) while simulating at most 10 % of the grid (Triton Model Analyzer's
// claim for its quick search), every configuration it ranks meets the bound, and a bound no device
// can meet is answered with nothing rather than a configuration that misses it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/experiment/experiment.h"
#include "app/plan/servingplan.h"
#include "app/plan/servingtargets.h"
#include "engine/emulation/devicecatalog.h"

namespace trainbench::app {
namespace {

Experiment experiment(const std::string& preset) {
    return parseExperiment(R"({"model": {"preset": ")" + preset + R"("}})", "serve.json");
}

ServingPlanRequest request(const Experiment& x, double qps, double p99) {
    ServingPlanRequest r;
    r.qps = qps;
    r.p99_seconds = p99;
    r.targets = emulatedServingTargets(x, engine::DeviceCatalog::builtin(),
                                       {engine::Precision::Fp32, engine::Precision::Bf16, engine::Precision::Int8});
    r.queries = 2000;
    return r;
}

TEST(ServingPlan, TheQuickSearchFindsNearlyTheBestOnATenthOfTheGrid) {
    struct Case {
        std::string preset;
        double qps, p99;
    };
    std::vector<Case> cases{{"mlp", 2000, 5e-3}, {"cnn", 5000, 10e-3}, {"resnet_small", 20000, 20e-3}, {"cnn", 300, 2e-3}};
#ifndef NDEBUG
    // Unoptimised under the sanitizers the four exhaustive searches take six minutes; the first one
    // runs the same code.
    cases.resize(1);
#endif
    for (const Case& c : cases) {
        SCOPED_TRACE(c.preset + " at " + std::to_string(c.qps) + " qps");
        const Experiment x = experiment(c.preset);
        ServingPlanRequest r = request(x, c.qps, c.p99);
        const ServingPlan quick = planServing(r);
        r.exhaustive = true;
        const ServingPlan all = planServing(r);
        ASSERT_FALSE(all.ranked.empty());
        ASSERT_FALSE(quick.ranked.empty());
        EXPECT_EQ(all.points_tried, all.grid_points);
        EXPECT_GE(all.ranked.front().usd_per_million / quick.ranked.front().usd_per_million, 0.95);
        EXPECT_LE(quick.points_tried, all.grid_points / 10);
        for (const ServingPoint& p : quick.ranked) {
            EXPECT_TRUE(p.meets);
            EXPECT_EQ(p.sim.refused, 0);
            EXPECT_LE(p.sim.p99, c.p99);
        }
    }
}

TEST(ServingPlan, ABoundBelowTheFastestSingleQueryHasNoAnswer) {
    const Experiment x = experiment("resnet_small");
    ServingPlanRequest r = request(x, 1000, 1e-6);
    const ServingPlan plan = planServing(r);
    EXPECT_TRUE(plan.ranked.empty());
    EXPECT_EQ(plan.points_tried, 0);
}

TEST(ServingPlan, CostIsTheInstancesPricePerQuery) {
    const Experiment x = experiment("mlp");
    ServingPlanRequest r = request(x, 1000, 10e-3);
    const ServingPlan plan = planServing(r);
    ASSERT_FALSE(plan.ranked.empty());
    const ServingPoint& best = plan.ranked.front();
    const ServingTarget& t = r.targets[best.config.target];
    EXPECT_NEAR(best.usd_per_million, best.config.instances * t.price_per_hour / 3600.0 / 1000.0 * 1e6, 1e-12);
}

TEST(ServingPlan, PrecomputingAFractionMixesTheTwoCosts) {
    EXPECT_DOUBLE_EQ(splitCostPerMillion(0.2, 1.0, 6.0), 0.2 * 1.0 + 0.8 * 6.0);
    EXPECT_DOUBLE_EQ(splitCostPerMillion(0.0, 1.0, 6.0), 6.0);
    EXPECT_DOUBLE_EQ(splitCostPerMillion(1.0, 1.0, 6.0), 1.0);
}

TEST(ServingPlan, BadTargetsAreRefused) {
    const Experiment x = experiment("mlp");
    EXPECT_THROW(planServing(request(x, 0, 1e-3)), std::invalid_argument);
    EXPECT_THROW(planServing(request(x, 10, 0)), std::invalid_argument);
}

}  // namespace
}  // namespace trainbench::app
