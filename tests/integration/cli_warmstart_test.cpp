// Warm start end to end through `trainbench-cli run`: a short source run leaves a checkpoint, a
// warm-started run begins where it ended (and well ahead of the same run from scratch), under every
// strategy; the run store records the source; another model fails before training, naming the
// source, the file and the layer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

// Conv, batch norm (running statistics to carry), ReLU, pooling, dense: 6,814 parameters.
const char* kModel = R"("model": {"layers": [{"type": "conv2d", "filters": 4, "kernel": 3, "bias": false},
    {"type": "batch_norm"}, {"type": "relu"}, {"type": "maxpool2d", "size": 2}, {"type": "flatten"},
    {"type": "dense", "units": 10}]})";

std::string writeFile(const std::filesystem::path& path, const std::string& name, const std::string& rest) {
    std::ofstream(path) << R"({"name": ")" + name + R"(", )" + kModel + ", " + rest + "}";
    return path.string();
}

struct Recorded {
    profiler::RunRow row;
    std::vector<profiler::StepSample> steps;
    std::vector<profiler::EvalSample> evals;
    std::map<std::string, std::string> attributes;
};

Recorded recorded(const std::string& db, const std::string& name) {
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun(name);
    if (!row) {
        ADD_FAILURE() << "no run " << name;
        return {};
    }
    Recorded r{*row, store.steps(row->id), store.evals(row->id), {}};
    for (auto& [k, v] : store.attributes(row->id)) r.attributes[k] = v;
    return r;
}

// The source: one epoch of 4,096 examples (32 steps), its final parameters left in a checkpoint.
// Run once for the suite; the tests start from it.
class CliWarmStart : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir;
        db_ = (dir_->path / "runs.db").string();
        const std::string file = writeFile(dir_->path / "source.json", "source",
            R"("seed": 1, "data": {"train_limit": 4096, "test_limit": 1000, "shuffle": true},
               "train": {"batch_size": 128, "epochs": 1, "threads": 2, "checkpoint_at_end": true})");
        const auto r = runCli({"run", file, "--db", db_, "-q"}, dir_->path);
        ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
        source_ = new Recorded(recorded(db_, "source"));
    }
    static void TearDownTestSuite() {
        delete source_;
        delete dir_;
    }

    // The run to compare: another seed, 2 steps on the same data, evaluated after each; `sections`
    // adds e.g. a strategy section.
    static std::string target(const std::string& name, const std::string& sections = "") {
        return writeFile(dir_->path / (name + ".json"), name,
            R"("seed": 2, "data": {"train_limit": 4096, "test_limit": 1000, "shuffle": true, "drop_remainder": true},
               "train": {"batch_size": 128, "epochs": 0, "max_steps": 2, "eval_every_steps": 1, "threads": 2})" +
                (sections.empty() ? "" : ", " + sections));
    }
    static std::string sourceId() { return std::to_string(source_->row.id.value); }

    static TempDir* dir_;
    static std::string db_;
    static Recorded* source_;
};

TempDir* CliWarmStart::dir_ = nullptr;
std::string CliWarmStart::db_;
Recorded* CliWarmStart::source_ = nullptr;

TEST_F(CliWarmStart, StartsWhereTheSourceEndedFarAheadOfTheSameRunFromScratch) {
    ASSERT_EQ(source_->row.steps, 32);
    ASSERT_FALSE(source_->evals.empty());
    const profiler::EvalSample& sourceEnd = source_->evals.back();
    ASSERT_GT(sourceEnd.accuracy, 0.4) << "one epoch learns something";

    ASSERT_EQ(runCli({"run", target("scratch"), "--db", db_, "-q"}, dir_->path).exitCode, 0);
    const auto r = runCli({"run", target("warm"), "--db", db_, "--set", "train.warm_start.run=" + sourceId()}, dir_->path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.err.find("warm start from run " + sourceId() + "'s checkpoint " + source_->attributes["checkpoint.path"] +
                         " (step 32), fresh optimizer"),
              std::string::npos)
        << r.err;
    Recorded scratch = recorded(db_, "scratch"), warm = recorded(db_, "warm");
    ASSERT_EQ(warm.evals.size(), 2u);
    ASSERT_EQ(scratch.evals.size(), 2u);
    // One step of a fresh Adam (lr 0.001) after the source: still about where the source ended.
    EXPECT_NEAR(warm.evals[0].accuracy, sourceEnd.accuracy, 0.05);
    EXPECT_GT(warm.evals[0].accuracy, scratch.evals[0].accuracy + 0.25);
    EXPECT_LT(warm.evals[0].loss, scratch.evals[0].loss - 0.5);
    EXPECT_LT(warm.steps[0].loss, scratch.steps[0].loss - 0.5) << "the first batch already meets trained parameters";

    EXPECT_EQ(warm.row.warm_start_run, source_->row.id.value);
    EXPECT_EQ(scratch.row.warm_start_run, std::nullopt);
    const auto shown = runCli({"show", "warm", "--db", db_}, dir_->path);
    EXPECT_NE(shown.out.find("warm start      from run " + sourceId()), std::string::npos) << shown.out;
    EXPECT_EQ(runCli({"show", "scratch", "--db", db_}, dir_->path).out.find("warm start"), std::string::npos);
    EXPECT_EQ(warm.attributes["warm_start.checkpoint"], source_->attributes["checkpoint.path"]);
    EXPECT_EQ(warm.attributes["warm_start.step"], "32") << "checkpoint_at_end saved after the last step";
    EXPECT_EQ(warm.attributes["warm_start.optimizer"], "fresh");
    EXPECT_EQ(scratch.attributes.count("warm_start.checkpoint"), 0u);
}

// One batch per epoch, so every step sees the same batch: the source's step 3 and the warm run's
// step 1 both start from the parameters after the source's step 2, the checkpointed ones, and
// their losses on that batch are the same number.
TEST_F(CliWarmStart, TheFirstStepSeesExactlyTheCheckpointedParameters) {
    const std::string data = R"("data": {"train_limit": 128, "test_limit": 200, "shuffle": false})";
    const std::string file = writeFile(dir_->path / "one-batch.json", "one-batch",
        R"("seed": 3, )" + data + R"(, "train": {"batch_size": 128, "epochs": 3, "threads": 2,
            "checkpoint_every_steps": 2, "checkpoint_path": "one-batch.ckpt"})");
    ASSERT_EQ(runCli({"run", file, "--db", db_, "-q"}, dir_->path).exitCode, 0);
    const std::string warmFile = writeFile(dir_->path / "one-batch-warm.json", "one-batch-warm",
        R"("seed": 4, )" + data + R"(, "train": {"batch_size": 128, "epochs": 1, "threads": 2,
            "warm_start": {"checkpoint": "one-batch.ckpt"}})");  // relative to the experiment file's folder
    const auto r = runCli({"run", warmFile, "--db", db_, "-q"}, dir_->path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    Recorded src = recorded(db_, "one-batch"), warm = recorded(db_, "one-batch-warm");
    ASSERT_EQ(src.steps.size(), 3u);
    ASSERT_EQ(warm.steps.size(), 1u);
    EXPECT_EQ(warm.steps[0].loss, src.steps[2].loss);
    EXPECT_NE(warm.steps[0].loss, src.steps[1].loss);
    EXPECT_EQ(warm.attributes["warm_start.step"], "2") << "periodic checkpoints only: the last is step 2's";
    // Given by file, the run is still known: the file is the one that run recorded.
    EXPECT_EQ(warm.row.warm_start_run, src.row.id.value);
}

TEST_F(CliWarmStart, AnotherModelOrAMissingSourceFailsBeforeTraining) {
    const std::string file = target("other-model");
    auto r = runCli({"run", file, "--db", db_, "--set", "model.preset=logreg", "--set",
                     "train.warm_start.run=" + sourceId()},
                    dir_->path);
    EXPECT_EQ(r.exitCode, 1) << r.err << r.out;
    const std::string why = "train.warm_start.run: run " + sourceId() + "'s checkpoint: " +
                            source_->attributes["checkpoint.path"] +
                            ": the checkpoint holds another model: layer 0: checkpoint has a conv2d layer, this model a flatten";
    EXPECT_NE(r.out.find(why), std::string::npos) << r.out;
    const Recorded failed = recorded(db_, "other-model");
    EXPECT_EQ(failed.row.status, profiler::RunStatus::Failed);
    EXPECT_EQ(failed.row.steps, 0);
    EXPECT_EQ(failed.row.warm_start_run, source_->row.id.value);

    r = runCli({"run", target("no-source"), "--db", db_, "--set", "train.warm_start.run=9999"}, dir_->path);
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find("train.warm_start.run: there is no run 9999 in " + db_), std::string::npos) << r.err;
    EXPECT_FALSE(profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly).findRun("no-source"))
        << "nothing is recorded for a run that could not start";
}

// With a negligible learning rate the first evaluation is the source's own, whichever strategy
// holds the parameters (emulated devices included); and the first step's loss, the mean over every replica's (or the worker's)
// part of the batch, is the source's too: a replica left at random parameters would lift it by
// more than a unit (from scratch it is about 3.5).
TEST_F(CliWarmStart, EveryStrategyStartsFromTheSource) {
    const profiler::EvalSample& sourceEnd = source_->evals.back();
    double singleFirstLoss = 0;
    const std::vector<std::pair<std::string, std::string>> strategies = {
        {"single", R"("strategy": {"type": "single"})"},
        {"mirrored", R"("strategy": {"type": "mirrored", "replicas": 2, "threads_per_replica": 1})"},
        {"multi_worker", R"("strategy": {"type": "multi_worker", "replicas": 2, "threads_per_replica": 1, "timeout_s": 120})"},
        {"parameter_server",
         R"("strategy": {"type": "parameter_server", "replicas": 2, "threads_per_replica": 1, "timeout_s": 120})"},
        // 8 emulated TPU cores, each normalising its own 16 examples (per-core batch norm).
        {"tpu_pod", R"("strategy": {"type": "tpu_pod", "slice": "v3-8"},
                       "device": {"type": "tpu-v3", "infeed_seconds_per_batch": 0.0002})"},
    };
    for (const auto& [name, strategy] : strategies) {
        SCOPED_TRACE(name);
        const std::string run = "tiny-lr-" + name;
        const auto r = runCli({"run", target(run, strategy), "--db", db_, "-q", "--set",
                               "train.warm_start.run=" + sourceId(), "--set", "optimizer.learning_rate=1e-9"},
                              dir_->path);
        ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
        const Recorded warm = recorded(db_, run);
        ASSERT_FALSE(warm.evals.empty());
        // Only batch norm's running statistics move (1 % towards a training batch's per step).
        EXPECT_NEAR(warm.evals[0].loss, sourceEnd.loss, 0.02);
        EXPECT_NEAR(warm.evals[0].accuracy, sourceEnd.accuracy, 0.02);
        EXPECT_EQ(warm.row.warm_start_run, source_->row.id.value);
        ASSERT_FALSE(warm.steps.empty());
        if (name == "single") singleFirstLoss = warm.steps[0].loss;
        EXPECT_NEAR(warm.steps[0].loss, singleFirstLoss, 0.3);
    }
}

}  // namespace

// A carried optimizer continues the source's Adam: its moments and its count of updates (32), on
// one device and on the parameter servers alike (one worker makes the job one device's, step for
// step). Servers that counted from 0 again would take steps three times as long at first.
TEST_F(CliWarmStart, ACarriedOptimizerCountsOnFromTheSourceOnTheParameterServersToo) {
    std::map<std::string, std::vector<profiler::StepSample>> steps;
    for (const auto& [name, strategy] : std::vector<std::pair<std::string, std::string>>{
             {"carry-single", R"("strategy": {"type": "single"})"},
             {"carry-ps", R"("strategy": {"type": "parameter_server", "replicas": 1, "timeout_s": 120})"}}) {
        const auto r = runCli({"run", target(name, strategy), "--db", db_, "--set", "train.warm_start.run=" + sourceId(),
                               "--set", "train.warm_start.optimizer=carry", "--set", "optimizer.learning_rate=0.01",
                               "--set", "train.max_steps=4"},
                              dir_->path);
        ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
        if (name == "carry-single") {
            EXPECT_NE(r.err.find("optimizer state carried over (32 updates)"), std::string::npos) << r.err;
        }
        Recorded run = recorded(db_, name);
        EXPECT_EQ(run.attributes["warm_start.optimizer"], "carry");
        steps[name] = run.steps;
    }
    ASSERT_EQ(steps["carry-single"].size(), 4u);
    ASSERT_EQ(steps["carry-ps"].size(), 4u);
    for (size_t i = 0; i < 4; ++i)
        EXPECT_NEAR(steps["carry-ps"][i].loss, steps["carry-single"][i].loss, 1e-6 * steps["carry-single"][i].loss)
            << "step " << i + 1;
}
