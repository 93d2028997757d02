// Data-scaling sweeps end to end on Fashion-MNIST: `trainbench-cli run` of a three-point
// data.fraction sweep records each run's fraction and subset size, evaluates every point on the
// whole test set, and `report --data-scaling` charts them; a fraction too small for one batch fails
// with the numbers; multi_worker and tpu_pod runs train on exactly the subset.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/emulatedruns.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

bool haveFashionMnist() { return std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"); }

using trainbench::testing::writeFile;

// Logistic regression, 30 steps of 64, evaluated on 1000 test examples at steps 15 and 30.
std::string logregExperiment(const std::string& name, const std::string& extra) {
    return R"({"name": ")" + name + R"(", "model": {"preset": "logreg"},
      "data": {"test_limit": 1000, "drop_remainder": true},
      "train": {"batch_size": 64, "epochs": 0, "max_steps": 30, "eval_every_steps": 15, "eval_at_epoch_end": false,
                "threads": 1})" + extra + "}";
}

}  // namespace

TEST(CliDataScaling, AFractionSweepRecordsEachSubsetAndChartsIt) {
    if (!haveFashionMnist()) GTEST_SKIP() << "Fashion-MNIST is not installed";
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string file =
        writeFile(tmp.path / "ds.json", logregExperiment("ds", R"(, "sweep": {"data.fraction": [0.0625, 0.25, 1]})"));
    auto r = runCli({"run", file, "--db", db}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE((r.out + r.err).find("data: 3750 training (data.fraction 0.0625: 3750 of 60000, subset seed 0) and 1000 test examples"),
              std::string::npos)
        << r.out;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto runs = store.listRuns();  // newest first
    ASSERT_EQ(runs.size(), 3u);
    const double fractions[] = {1.0, 0.25, 0.0625};
    const int64_t examples[] = {60000, 15000, 3750};
    for (size_t i = 0; i < 3; ++i) {
        SCOPED_TRACE(runs[i].name);
        EXPECT_EQ(runs[i].status, profiler::RunStatus::Completed);
        EXPECT_EQ(runs[i].data_fraction, fractions[i]);
        EXPECT_EQ(runs[i].train_examples, examples[i]);
        EXPECT_TRUE(runs[i].best_accuracy.has_value());
        // Every point is evaluated on the same, whole test split.
        for (const auto& e : store.evals(runs[i].id)) EXPECT_EQ(e.samples, 1000);
    }

    r = runCli({"report", std::to_string(runs[2].id.value), std::to_string(runs[1].id.value),
                std::to_string(runs[0].id.value), "--data-scaling", "--json", "--db", db},
               tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["curves"].size(), 1u);
    EXPECT_EQ(j["curves"][0]["label"], "ds");
    const auto& points = j["curves"][0]["points"];
    ASSERT_EQ(points.size(), 3u);
    EXPECT_EQ(points[0]["examples"], 3750);
    EXPECT_EQ(points[2]["examples"], 60000);
    EXPECT_TRUE(j["curves"][0]["power_law"].contains("slope"));
}

TEST(CliDataScaling, AFractionTooSmallForOneBatchFailsWithTheNumbers) {
    if (!haveFashionMnist()) GTEST_SKIP() << "Fashion-MNIST is not installed";
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string file = writeFile(tmp.path / "tiny.json", logregExperiment("tiny", R"(, "seed": 1)"));
    auto r = runCli({"run", file, "--set", "data.fraction=0.001", "--set", "train.batch_size=128", "--db", db, "-q"},
                    tmp.path);
    EXPECT_NE(r.exitCode, 0);
    const std::string want = "data.fraction 0.001 keeps 60 of 60000 training examples, fewer than one global batch of "
                             "128: with data.drop_remainder no step would run (raise data.fraction to at least 0.0022, "
                             "or lower train.batch_size)";
    EXPECT_NE((r.out + r.err).find(want), std::string::npos) << r.out << r.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, profiler::RunStatus::Failed);
    EXPECT_NE(runs[0].message.value_or("").find(want), std::string::npos);

    r = runCli({"run", file, "--set", "data.fraction=0", "--db", db, "-q"}, tmp.path);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("data.fraction: must be > 0 and <= 1, got 0"), std::string::npos) << r.err;
}

TEST(CliDataScaling, MultiWorkerRanksShareOnePassOverTheSubset) {
    if (!haveFashionMnist()) GTEST_SKIP() << "Fashion-MNIST is not installed";
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // One epoch of a quarter of the training set (15,000) in global batches of 256 over 2 workers.
    const std::string file = writeFile(tmp.path / "mw.json", R"({"name": "mw", "model": {"preset": "logreg"},
      "data": {"fraction": 0.25, "test_limit": 500},
      "train": {"batch_size": 256, "epochs": 1, "eval_at_epoch_end": true, "threads": 1},
      "strategy": {"type": "multi_worker", "replicas": 2, "timeout_s": 120}})");
    auto r = runCli({"run", file, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("mw");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->train_examples, 15000);
    EXPECT_EQ(row->data_fraction, 0.25);
    const auto steps = store.steps(row->id);
    EXPECT_EQ(steps.size(), 59u);  // ceil(15000 / 256)
    const int64_t samples = std::accumulate(steps.begin(), steps.end(), int64_t{0},
                                            [](int64_t n, const profiler::StepSample& s) { return n + s.samples; });
    EXPECT_EQ(samples, 15000) << "one pass over exactly the subset";
}

TEST(CliDataScaling, ATpuPodIsFedFromTheSubset) {
    if (!haveFashionMnist()) GTEST_SKIP() << "Fashion-MNIST is not installed";
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // 4096 examples (train_limit), half of them: 2048, 8 global batches of 256 (the run's 8 steps).
    const std::string file = writeFile(tmp.path / "pod.json", trainbench::testing::emulated::experiment("pod", trainbench::testing::emulated::kSlice));
    auto r = runCli({"run", file, "--set", "data.fraction=0.5", "--set", "train.epochs=1", "--set", "train.max_steps=0",
                     "--db", db, "-q"},
                    tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("pod");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->train_examples, 2048);
    EXPECT_EQ(row->clock, "virtual");
    const auto steps = store.steps(row->id);
    EXPECT_EQ(steps.size(), 8u) << "one epoch: one pass over the subset";
    int64_t samples = 0;
    for (const auto& s : steps) samples += s.samples;
    EXPECT_EQ(samples, 2048);
}

TEST(CliDataScaling, AnEstimateCountsTheSubsetsSteps) {
    TempDir tmp;
    const std::string file = std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/resnet50-imagenet-estimate.json";
    auto r = runCli({"estimate", file, "--json", "--set", "data.fraction=0.1"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    const auto rows = nlohmann::json::parse(r.out);
    ASSERT_FALSE(rows.empty());
    // 90 epochs of a tenth of ImageNet's 1,281,167 images (128,117), 128 per core on 8 cores.
    EXPECT_EQ(rows[0]["steps"], 90LL * 128117 / (128LL * 8));
}
