// Stop reasons by name: the names are the ones the run store holds, each parses back to its reason,
// and anything else (a misspelling, another case) is no reason.
#include "engine/telemetry/stopreason.h"

#include <gtest/gtest.h>

namespace trainbench::engine {
namespace {

TEST(StopReason, NamesAreTheStoredOnesAndParseBack) {
    EXPECT_EQ(stopReasonName(StopReason::Epochs), "epochs");
    EXPECT_EQ(stopReasonName(StopReason::MaxSteps), "max_steps");
    EXPECT_EQ(stopReasonName(StopReason::TargetAccuracy), "target_accuracy");
    EXPECT_EQ(stopReasonName(StopReason::Stopped), "stopped");
    for (StopReason reason : kStopReasons) EXPECT_EQ(parseStopReason(stopReasonName(reason)), reason);
}

TEST(StopReason, AnythingElseIsNoReason) {
    for (const char* bad : {"", "Epochs", "max-steps", "target", "stopped ", "completed"})
        EXPECT_FALSE(parseStopReason(bad).has_value()) << bad;
}

}  // namespace
}  // namespace trainbench::engine
