#pragma once
// Checks one shipped experiment (experiments/<name>.json) end to end through trainbench-cli: a
// short version of it gets the verdict its description promises, action 1 is the intended fix, and
// `apply --action 1 --run` makes a run that is measurably better. Timing decides the roofline rule
// and the throughput, so runs measured while other processes took a core (machineload.h) are
// repeated rather than trusted; a check that never got a quiet machine is skipped, not failed.
//
// Each step returns false when the test failed or was skipped: the test then stops.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/store/runrow.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::testing {

// Runs of one side of a comparison, and of a verdict, before the check gives up on a busy machine.
inline constexpr int kAttempts = 3;
// How long a timed run waits for a quiet machine before it starts; the check is skipped after that.
inline constexpr std::chrono::seconds kQuietWait{20};

struct RecordedRun {
    profiler::RunRow row;
    double otherCores = 0.0;  // mean cores other processes kept busy while it ran
    bool quiet() const;
};

class ExperimentCheck {
public:
    // `overrides` ("train.max_steps=80") make the short version; they go to every run as --set.
    ExperimentCheck(std::filesystem::path dir, std::string experiment, std::vector<std::string> overrides);
    // For a check whose outcome does not depend on timing (memory capacity comes from shapes): its
    // runs start without waiting for a quiet machine.
    void ignoreLoad() { timed_ = false; }

    // Action 1's changes: key and new value, in order.
    using Changes = std::vector<std::pair<std::string, nlohmann::json>>;
    // Runs the short version until its verdict is `kind` and its action 1 makes exactly `action`.
    // Anything else is run again (the roofline rule and the estimates that rank the actions depend
    // on timing): always when other processes were busy, once when the machine was quiet (this VM's
    // speed changes from one minute to the next); a second quiet miss fails the test.
    bool runUntilVerdict(profiler::BoundKind kind, const Changes& action);
    // `apply --action 1 --run` into the same store: the experiment file is written beside the store.
    bool applyAction1();
    // The applied run's steady-state throughput beats the first run's by more than `factor`, both
    // sides best of up to kAttempts runs (other work on the machine only ever lowers a throughput).
    bool expectFaster(double factor);

    const RecordedRun& base() const { return *base_; }
    const RecordedRun& applied() const { return *applied_; }
    const std::string& db() const { return db_; }
    std::string appliedFile() const;
    // `trainbench-cli profile` of a run, for failure messages.
    std::string profile(const RecordedRun& run) const;
    // The run's stored verdict, findings and actions.
    profiler::Verdict verdict(const RecordedRun& run) const;

private:
    // What is wrong with the run's verdict or action 1; empty when both are as expected.
    std::string mismatch(const RecordedRun& run, profiler::BoundKind kind, const Changes& action) const;
    std::optional<RecordedRun> record(std::vector<std::string> args) const;
    std::vector<std::string> baseArgs() const;

    std::filesystem::path dir_;
    std::string experiment_;
    std::vector<std::string> overrides_;
    std::string db_;
    std::optional<RecordedRun> base_, applied_;
    bool timed_ = true;
};

// Marks the running test skipped from a function that returns a value (GTEST_SKIP returns void).
void skipTest(const std::string& why);

}  // namespace trainbench::testing
