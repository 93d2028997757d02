// Strategy kinds by name: every kind's name parses back to it, names are the ones experiment files
// and stored runs use, and anything else (a misspelling, another case) is not a kind.
#include "engine/strategy/strategykind.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trainbench::engine {
namespace {

TEST(StrategyKind, NamesAreTheExperimentFilesOnesAndParseBack) {
    EXPECT_EQ(strategyKindName(StrategyKind::Single), "single");
    EXPECT_EQ(strategyKindName(StrategyKind::Mirrored), "mirrored");
    EXPECT_EQ(strategyKindName(StrategyKind::MultiWorker), "multi_worker");
    EXPECT_EQ(strategyKindName(StrategyKind::ParameterServer), "parameter_server");
    EXPECT_EQ(strategyKindName(StrategyKind::TpuPod), "tpu_pod");
    for (StrategyKind kind : kStrategyKinds) EXPECT_EQ(parseStrategyKind(strategyKindName(kind)), kind);
}

TEST(StrategyKind, AnythingElseIsNotAKind) {
    for (const char* bad : {"", "Mirrored", "multi-worker", "parameter_servers", "tpu", " single"})
        EXPECT_FALSE(parseStrategyKind(bad).has_value()) << bad;
}

TEST(StrategyKind, TheChoicesAreEveryKindInOrder) {
    const std::vector<std::string> names = strategyKindNames();
    ASSERT_EQ(names.size(), kStrategyKinds.size());
    for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], strategyKindName(kStrategyKinds[i]));
}

TEST(StrategyKind, OnlyJobStrategiesAreMultiProcess) {
    EXPECT_TRUE(isMultiProcess(StrategyKind::MultiWorker));
    EXPECT_TRUE(isMultiProcess(StrategyKind::ParameterServer));
    EXPECT_FALSE(isMultiProcess(StrategyKind::Single));
    EXPECT_FALSE(isMultiProcess(StrategyKind::Mirrored));
    EXPECT_FALSE(isMultiProcess(StrategyKind::TpuPod));
}

}  // namespace
}  // namespace trainbench::engine
