// End to end: an experiment file with a sweep is one run per point, each recorded on its own, and
// `validate` lists the points; a bad point stops everything before the first run.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

// Two points of two steps each on a slice of Fashion-MNIST.
const char* kSweep = R"({
  "name": "tiny",
  "model": {"preset": "logreg"},
  "data": {"train_limit": 512, "test_limit": 256},
  "train": {"epochs": 0, "max_steps": 2, "eval_at_epoch_end": false, "threads": 1},
  "sweep": {"train.batch_size": [16, 32]}
})";

using trainbench::testing::writeFile;

}  // namespace

TEST(CliSweep, RunMakesOneRunPerPoint) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string file = writeFile(tmp.path / "tiny.json", kSweep);
    auto r = runCli({"run", file, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("sweep point 1/2: tiny-batch_size16  (train.batch_size=16)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("sweep point 2/2: tiny-batch_size32  (train.batch_size=32)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("sweep: 2 of 2 points completed"), std::string::npos) << r.out;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto runs = store.listRuns();  // newest first
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[1].name, "tiny-batch_size16");
    EXPECT_EQ(runs[0].name, "tiny-batch_size32");
    for (const auto& run : runs) {
        EXPECT_EQ(run.status, profiler::RunStatus::Completed);
        EXPECT_EQ(run.steps.value_or(0), 2);
        // Each run records its own point, without the sweep: `show` and `apply` see one experiment.
        const auto config = nlohmann::json::parse(run.config_json);
        EXPECT_FALSE(config.contains("sweep")) << run.config_json;
        EXPECT_EQ(config["train"]["batch_size"], run.name == "tiny-batch_size16" ? 16 : 32);
        EXPECT_EQ(store.steps(run.id).front().samples, run.name == "tiny-batch_size16" ? 16 : 32);
    }
}

TEST(CliSweep, ValidateListsThePoints) {
    TempDir tmp;
    const std::string file = writeFile(tmp.path / "tiny.json", kSweep);
    auto r = runCli({"validate", file, "--set", "strategy.type=mirrored", "--set",
                     R"(sweep={"strategy.replicas": [1, 2], "train.batch_size": [16, 32]})"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("sweep of 4 points"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  1. tiny-replicas1-batch_size16  (strategy.replicas=1, train.batch_size=16)"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  4. tiny-replicas2-batch_size32  (strategy.replicas=2, train.batch_size=32)"),
              std::string::npos) << r.out;
}

TEST(CliSweep, AnInvalidPointStopsTheSweepBeforeAnythingRuns) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string file = writeFile(tmp.path / "tiny.json", kSweep);
    // The first point is fine; the second breaks strategy 'single' (one replica).
    auto r = runCli({"run", file, "--db", db, "--set", R"(sweep={"strategy.replicas": [1, 2]})"}, tmp.path);
    EXPECT_EQ(r.exitCode, 2) << r.err << r.out;
    EXPECT_NE(r.err.find("tiny.json: strategy.replicas: is 2 but strategy.type is 'single'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(in sweep point 'tiny-replicas2': strategy.replicas=2)"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(db)) << "no run may start while a point is invalid";
}
