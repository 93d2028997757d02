// End to end: trainbench-cli trains on real Fashion-MNIST, records into a real SQLite file, and the
// listing commands show what was recorded.
#include <gtest/gtest.h>

#include <regex>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {
using trainbench::testing::kMlp;
// A small slice so the test takes seconds: 3000 training and 1000 test images.
std::vector<std::string> sliceArgs(const std::string& db) {
    return {"run", kMlp, "--db", db, "--set", "data.train_limit=3000", "--set", "data.test_limit=1000",
            "--set", "train.epochs=2", "--set", "train.threads=1", "--set", "train.eval_every_steps=10",
            "--set", "train.target_accuracy=0.6"};
}
}  // namespace

TEST(CliRun, TrainsOnASliceOfFashionMnistAndTheListingShowsIt) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    auto r = runCli(sliceArgs(db), tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("completed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("time to 60.00 %"), std::string::npos) << r.out;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    const auto& run = runs[0];
    EXPECT_EQ(run.status, profiler::RunStatus::Completed);
    // 3000 / 128 -> 24 steps per epoch (the last one 56 examples), 2 epochs.
    EXPECT_EQ(run.steps.value_or(0), 48);
    ASSERT_TRUE(run.final_accuracy.has_value());
    EXPECT_GT(*run.final_accuracy, 0.6) << "a 3000-image MLP should be far above chance (10 %)";
    ASSERT_TRUE(run.time_to_target.has_value());
    EXPECT_GT(*run.time_to_target, 0.0);
    auto steps = store.steps(run.id);
    ASSERT_EQ(steps.size(), 48u);
    EXPECT_LT(steps.back().loss, steps.front().loss);
    EXPECT_EQ(steps[23].samples, 3000 - 23 * 128);
    auto evals = store.evals(run.id);
    ASSERT_GE(evals.size(), 5u);  // every 10 steps and at each epoch end
    EXPECT_EQ(evals.back().step, 48);
    EXPECT_EQ(evals.back().samples, 1000);

    auto list = runCli({"runs", "--db", db}, tmp.path);
    ASSERT_EQ(list.exitCode, 0) << list.err;
    EXPECT_NE(list.out.find("fmnist-mlp"), std::string::npos) << list.out;
    EXPECT_NE(list.out.find("completed"), std::string::npos) << list.out;
    char acc[32];
    std::snprintf(acc, sizeof acc, "%.2f%%", 100.0 * *run.final_accuracy);
    EXPECT_NE(list.out.find(acc), std::string::npos) << list.out;

    auto show = runCli({"show", std::to_string(run.id.value), "--db", db}, tmp.path);
    ASSERT_EQ(show.exitCode, 0) << show.err;
    EXPECT_NE(show.out.find("evaluations (" + std::to_string(evals.size()) + ")"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("\"preset\": \"mlp\""), std::string::npos) << show.out;

    auto csv = runCli({"export", "fmnist-mlp", "--db", db, "--csv"}, tmp.path);
    ASSERT_EQ(csv.exitCode, 0) << csv.err;
    EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 49) << "header + 48 steps";
    EXPECT_EQ(csv.out.rfind("step,epoch,loss,", 0), 0u);
    auto evalCsv = runCli({"export", "1", "--db", db, "--csv", "--series", "evals"}, tmp.path);
    ASSERT_EQ(evalCsv.exitCode, 0);
    EXPECT_EQ(std::count(evalCsv.out.begin(), evalCsv.out.end(), '\n'), static_cast<long>(evals.size() + 1));
}

TEST(CliRun, TheDefaultStoreIsCreatedOnAFreshMachine) {
    // As in the README's quick start: no --db, a home without ~/.local/share/trainbench.
    TempDir tmp;
    const auto home = tmp.path / "home";
    std::filesystem::create_directories(home);
    setenv("HOME", home.c_str(), 1);
    unsetenv("XDG_DATA_HOME");
    unsetenv("TRAINBENCH_DB");
    auto args = sliceArgs("unused");
    args.erase(args.begin() + 2, args.begin() + 4);  // drop --db
    args.insert(args.end(), {"--set", "train.max_steps=5"});
    auto r = runCli(args, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto db = home / ".local/share/trainbench/runs.db";
    EXPECT_TRUE(std::filesystem::exists(db));
    EXPECT_NE(r.out.find(db.string()), std::string::npos) << "the summary says where the results are:\n" << r.out;
    auto list = runCli({"runs"}, tmp.path);
    EXPECT_NE(list.out.find("fmnist-mlp"), std::string::npos) << list.out;
}

TEST(CliRun, SameSeedGivesTheSameLossCurveAndAnotherSeedDoesNot) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    auto args = sliceArgs(db);
    args.insert(args.end(), {"--set", "train.max_steps=15", "--set", "train.threads=2"});
    ASSERT_EQ(runCli(args, tmp.path).exitCode, 0);
    ASSERT_EQ(runCli(args, tmp.path).exitCode, 0);
    args.insert(args.end(), {"--set", "seed=7"});
    ASSERT_EQ(runCli(args, tmp.path).exitCode, 0);
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto a = store.steps({1}), b = store.steps({2}), c = store.steps({3});
    ASSERT_EQ(a.size(), 15u);
    ASSERT_EQ(b.size(), 15u);
    bool differs = false;
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].loss, b[i].loss) << "step " << i + 1;  // bitwise: same seed, same thread count
        differs |= a[i].loss != c[i].loss;
    }
    EXPECT_TRUE(differs);
}

TEST(CliRun, InvalidExperimentIsRejectedBeforeAnythingRuns) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    auto r = runCli({"run", kMlp, "--db", db, "--set", "train.bach_size=64"}, tmp.path);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("train.bach_size"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("batch_size"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(db)) << "nothing may be recorded for an invalid experiment";

    std::ofstream(tmp.path / "broken.json") << "{\n  \"model\": {\"preset\": \"mlp\"},\n  \"train\": {\"epochs\": 1,}\n}\n";
    r = runCli({"run", (tmp.path / "broken.json").string(), "--db", db}, tmp.path);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("broken.json:3:"), std::string::npos) << r.err;
}

TEST(CliRun, MissingDataFailsTheRunWithTheReasonRecorded) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    auto r = runCli({"run", kMlp, "--db", db, "--set", "data.path=" + (tmp.path / "nowhere").string()}, tmp.path);
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, profiler::RunStatus::Failed);
    ASSERT_TRUE(runs[0].message.has_value());
    EXPECT_NE(runs[0].message->find("train-images-idx3-ubyte"), std::string::npos) << *runs[0].message;
}

TEST(CliRun, UnknownRunAndMissingStoreHaveClearErrors) {
    TempDir tmp;
    const std::string db = (tmp.path / "none.db").string();
    auto r = runCli({"show", "3", "--db", db}, tmp.path);
    EXPECT_EQ(r.exitCode, 3);
    EXPECT_NE(r.err.find("none.db"), std::string::npos);
    auto list = runCli({"runs", "--db", db}, tmp.path);
    EXPECT_EQ(list.exitCode, 0);
    EXPECT_NE(list.out.find("no runs yet"), std::string::npos);
    ASSERT_EQ(runCli(sliceArgs((tmp.path / "a.db").string()), tmp.path).exitCode, 0);
    auto missing = runCli({"show", "42", "--db", (tmp.path / "a.db").string()}, tmp.path);
    EXPECT_EQ(missing.exitCode, 4);
    EXPECT_NE(missing.err.find("no run '42'"), std::string::npos) << missing.err;
}
