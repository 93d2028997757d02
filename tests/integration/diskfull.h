#pragma once
// Shared by the disk-full tests (cli_diskfull_*_test.cpp): a quick real run (logistic regression
// on a Fashion-MNIST slice, one thread) and what a full disk must not have damaged.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/store/runstore.h"
#include "tests/integration/smallfilesystem.h"
#include "tests/profiler/storetestutil.h"

namespace trainbench::testing {

#define SKIP_WITHOUT_SMALL_FILE_SYSTEM(fs) \
    if (!(fs).mounted()) GTEST_SKIP() << "a disk-full test needs a small tmpfs of its own: " << (fs).error()

inline std::vector<std::string> quickRun(const std::string& db, const std::vector<std::string>& more = {}) {
    std::vector<std::string> args{"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-logreg.json",
                                  "--db", db, "--set", "train.threads=1", "--set", "data.train_limit=2048",
                                  "--set", "data.test_limit=200", "--set", "train.epochs=1"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

inline std::string integrityOf(const std::string& db) {
    return profiler::testutil::RawDb(db).text("PRAGMA integrity_check");
}

// Steps 1..n, none missing or twice.
inline void expectContiguousSteps(const std::vector<profiler::StepSample>& steps) {
    for (size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i].step, static_cast<int64_t>(i + 1)) << "at index " << i;
}

}  // namespace trainbench::testing
