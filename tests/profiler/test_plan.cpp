// The planner's ranking: by time (or cost) to the target, each configuration marked against the
// deadline and the budget; the fastest within the budget and the cheapest within the deadline.
#include <gtest/gtest.h>

#include <stdexcept>

#include "profiler/format/numberformat.h"
#include "profiler/plan/plan.h"
#include "profiler/plan/quantities.h"

namespace trainbench::profiler {
namespace {

PlanCandidate candidate(const std::string& label, std::optional<double> seconds, std::optional<double> cost) {
    PlanCandidate c;
    c.label = label;
    c.seconds = seconds;
    c.cost = cost;
    if (!seconds) c.why = "never reached";
    return c;
}

std::vector<PlanCandidate> five() {
    return {candidate("A", 100, 5), candidate("B", 50, 20), candidate("C", 200, 1), candidate("D", std::nullopt, std::nullopt),
            candidate("E", 80, std::nullopt)};
}

std::string order(const Plan& p) {
    std::string s;
    for (const PlanRow& r : p.rows) s += r.candidate.label;
    return s;
}

TEST(Plan, RanksByTimeAndMarksTheDeadlineAndTheBudget) {
    const Plan p = rankPlan(five(), {120.0, 10.0});
    EXPECT_EQ(order(p), "BEACD");
    // B: in time, over budget. E: in time, cost unknown. A: both. C: too slow, cheap. D: never.
    EXPECT_TRUE(p.rows[0].meets_deadline);
    EXPECT_EQ(p.rows[0].meets_budget, false);
    EXPECT_TRUE(p.rows[1].meets_deadline);
    EXPECT_FALSE(p.rows[1].meets_budget.has_value());
    EXPECT_FALSE(p.rows[1].meetsBoth());
    EXPECT_TRUE(p.rows[2].meetsBoth());
    EXPECT_FALSE(p.rows[3].meets_deadline);
    EXPECT_EQ(p.rows[3].meets_budget, true);
    EXPECT_FALSE(p.rows[4].meets_deadline);
    EXPECT_FALSE(p.rows[4].meets_budget.has_value());
    ASSERT_TRUE(p.fastest_within_budget.has_value());
    EXPECT_EQ(p.rows[*p.fastest_within_budget].candidate.label, "A");
    ASSERT_TRUE(p.cheapest_within_deadline.has_value());
    EXPECT_EQ(p.rows[*p.cheapest_within_deadline].candidate.label, "A");
}

TEST(Plan, RanksByCostWithUnknownCostsAfterKnownOnes) {
    const Plan p = rankPlan(five(), {120.0, 10.0}, PlanOrder::Cost);
    EXPECT_EQ(order(p), "CABED");
}

TEST(Plan, NoLimitsNameTheFastestAndTheCheapestKnown) {
    const Plan p = rankPlan(five(), {});
    EXPECT_EQ(p.rows[*p.fastest_within_budget].candidate.label, "B");
    EXPECT_EQ(p.rows[*p.cheapest_within_deadline].candidate.label, "C");
}

TEST(Plan, NothingWithinTheLimitsNamesNothing) {
    const Plan p = rankPlan(five(), {10.0, 0.5});
    EXPECT_FALSE(p.fastest_within_budget.has_value());
    EXPECT_FALSE(p.cheapest_within_deadline.has_value());
}

TEST(Quantities, DurationsInTheUnitsPeopleWrite) {
    EXPECT_DOUBLE_EQ(parseDuration("90s"), 90);
    EXPECT_DOUBLE_EQ(parseDuration("45m"), 2700);
    EXPECT_DOUBLE_EQ(parseDuration("2h"), 7200);
    EXPECT_DOUBLE_EQ(parseDuration("1h30m"), 5400);
    EXPECT_DOUBLE_EQ(parseDuration("1.5h"), 5400);
    EXPECT_DOUBLE_EQ(parseDuration("1d2h"), 93600);
    EXPECT_DOUBLE_EQ(parseDuration("2H"), 7200);
    EXPECT_DOUBLE_EQ(parseDuration("600"), 600);
    EXPECT_DOUBLE_EQ(parseDuration("250ms"), 0.25);
    EXPECT_DOUBLE_EQ(parseDuration("1m30s500ms"), 90.5);
    for (const char* bad : {"", "2x", "h2", "30m1h", "-5m", "0s", "1h30", "1.2.3h", "2 h", "5ms1s"})
        EXPECT_THROW(parseDuration(bad, "deadline"), std::invalid_argument) << bad;
    try {
        parseDuration("2x", "deadline");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()), "deadline '2x': unknown unit 'x' at character 2 (ms, s, m, h or d); expected a duration "
                                         "such as 90s, 45m, 2h, 1h30m or 1.5d");
    }
}

TEST(Quantities, MoneyWithOrWithoutTheDollar) {
    EXPECT_DOUBLE_EQ(parseMoney("5"), 5);
    EXPECT_DOUBLE_EQ(parseMoney("$5"), 5);
    EXPECT_DOUBLE_EQ(parseMoney(" $ 12.50 "), 12.5);
    EXPECT_DOUBLE_EQ(parseMoney("USD 3"), 3);
    EXPECT_DOUBLE_EQ(parseMoney("0"), 0);
    for (const char* bad : {"", "$", "five", "-5", "$-5", "5$", "5 USD", "1e3"})
        EXPECT_THROW(parseMoney(bad, "budget"), std::invalid_argument) << bad;
    EXPECT_EQ(formatMoney(0.0042), "$0.0042");
    EXPECT_EQ(formatMoney(1.254), "$1.25");
    EXPECT_EQ(formatDuration(5400), "90.0 min");
}

}  // namespace
}  // namespace trainbench::profiler
