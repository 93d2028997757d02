// MLPerf's summary of a seed group: five runs or more drop the fastest and the slowest; a run that
// never reached the target is the slowest. Expected values worked out by hand.
#include <gtest/gtest.h>

#include "profiler/grouping/groupstatistic.h"

namespace trainbench::profiler {
namespace {

std::vector<RunOutcome> outcomes(std::initializer_list<std::optional<double>> seconds) {
    std::vector<RunOutcome> out;
    for (const auto& s : seconds) out.push_back({s, s ? std::optional<double>(*s * 2.0) : std::nullopt});  // $2 a second
    return out;
}

TEST(GroupStatistic, FiveRunsDropTheFastestAndTheSlowest) {
    const GroupStatistic g = groupStatistic(outcomes({5, 3, 9, 4, 7}));
    EXPECT_EQ(g.runs, 5);
    EXPECT_EQ(g.reached, 5);
    EXPECT_EQ(g.dropped, 2);
    EXPECT_DOUBLE_EQ(*g.seconds, 16.0 / 3.0);  // 4, 5, 7
    EXPECT_DOUBLE_EQ(*g.cost, 32.0 / 3.0);
    EXPECT_DOUBLE_EQ(*g.min_seconds, 3.0);
    EXPECT_DOUBLE_EQ(*g.max_seconds, 9.0);
    EXPECT_NEAR(*g.stddev_seconds, 1.527525231651947, 1e-12);  // sqrt(7/3)
}

TEST(GroupStatistic, OneUnreachedRunOfFiveIsDroppedAsTheSlowest) {
    const GroupStatistic g = groupStatistic(outcomes({5, 3, std::nullopt, 4, 7}));
    EXPECT_EQ(g.reached, 4);
    EXPECT_EQ(g.dropped, 2);
    EXPECT_DOUBLE_EQ(*g.seconds, 16.0 / 3.0);  // 3 and the unreached one dropped: 4, 5, 7
    EXPECT_DOUBLE_EQ(*g.max_seconds, 7.0);
}

TEST(GroupStatistic, TwoUnreachedOfFiveOrOneOfFourMeanNotReached) {
    const GroupStatistic five = groupStatistic(outcomes({5, 3, std::nullopt, std::nullopt, 7}));
    EXPECT_EQ(five.reached, 3);
    EXPECT_FALSE(five.seconds.has_value());
    EXPECT_FALSE(five.cost.has_value());
    const GroupStatistic four = groupStatistic(outcomes({5, 3, std::nullopt, 7}));
    EXPECT_EQ(four.dropped, 0);
    EXPECT_EQ(four.reached, 3);
    EXPECT_FALSE(four.seconds.has_value());
    EXPECT_DOUBLE_EQ(*four.min_seconds, 3.0);
}

TEST(GroupStatistic, FewerThanFiveRunsAreAllAveraged) {
    const GroupStatistic g = groupStatistic(outcomes({2, 4}));
    EXPECT_EQ(g.dropped, 0);
    EXPECT_DOUBLE_EQ(*g.seconds, 3.0);
    EXPECT_NEAR(*g.stddev_seconds, 1.4142135623730951, 1e-12);
    const GroupStatistic one = groupStatistic(outcomes({6}));
    EXPECT_DOUBLE_EQ(*one.seconds, 6.0);
    EXPECT_FALSE(one.stddev_seconds.has_value());
    EXPECT_EQ(groupStatistic({}).runs, 0);
    EXPECT_FALSE(groupStatistic({}).seconds.has_value());
}

TEST(GroupStatistic, AKeptRunWithoutAPriceMakesTheCostUnknown) {
    std::vector<RunOutcome> runs = outcomes({2, 4, 6});
    runs[1].cost.reset();
    const GroupStatistic g = groupStatistic(runs);
    EXPECT_DOUBLE_EQ(*g.seconds, 4.0);
    EXPECT_FALSE(g.cost.has_value());
}

}  // namespace
}  // namespace trainbench::profiler
