#pragma once
// Experiments on emulated devices for the end-to-end tests: W1 on 4,096 examples, global batch 256,
// 8 steps, with a strategy and device section of the test's choosing, run through the CLI.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

namespace trainbench::testing::emulated {


using trainbench::testing::writeFile;

// W1 on 4096 examples, global batch 256, 8 steps; the device section is appended.
inline std::string experiment(const std::string& name, const std::string& strategyAndDevice) {
    return R"({"name": ")" + name + R"(", "model": {"preset": "mlp"},
      "data": {"train_limit": 4096, "test_limit": 1000, "drop_remainder": true, "shuffle": true},
      "train": {"batch_size": 256, "epochs": 0, "max_steps": 8, "eval_every_steps": 4, "threads": 2},
      )" + strategyAndDevice + "}";
}

struct Recorded {
    profiler::RunRow row;
    std::vector<profiler::StepSample> steps;
    std::vector<profiler::EvalSample> evals;
};

inline Recorded runOne(const TempDir& tmp, const std::string& db, const std::string& name, const std::string& body) {
    const std::string file = writeFile(tmp.path / (name + ".json"), experiment(name, body));
    auto r = runCli({"run", file, "--db", db, "-q"}, tmp.path);
    EXPECT_EQ(r.exitCode, 0) << r.err << r.out;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto row = store.findRun(name);
    EXPECT_TRUE(row.has_value()) << name;
    if (!row) return {};
    return {*row, store.steps(row->id), store.evals(row->id)};
}

inline const char* kSlice = R"("strategy": {"type": "tpu_pod", "slice": "v3-32"},
      "device": {"type": "tpu-v3", "infeed_seconds_per_batch": 0.0002})";


}  // namespace trainbench::testing::emulated
