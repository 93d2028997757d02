// train.warm_start: the source is found through a run of the store or given as a file, and every way
// it can be missing or wrong fails with the key path, the run and the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "app/experiment/experiment.h"
#include "app/run/warmstartsource.h"
#include "engine/util/errors.h"
#include "profiler/store/runwriter.h"
#include "tests/app/experimenttesting.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;

class WarmStartSourceTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("trainbench-warmstart-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }

    // A finished run of the store, recording `checkpoint` as its checkpoint.path when not empty.
    int64_t addRun(const std::string& name, const std::string& checkpoint = "") {
        profiler::RunSpec spec;
        spec.name = name;
        profiler::RunWriter w(db_, spec);
        if (!checkpoint.empty()) w.attributes({{"checkpoint.path", checkpoint}});
        w.finish(profiler::RunStatus::Completed, {});
        return w.runId().value;
    }
    std::string writeCheckpoint(const std::string& name, const std::string& metadata) {
        const float params[3] = {1.0f, 2.0f, 3.0f};
        engine::CheckpointWriter w;
        w.addFloats("params", params);
        w.setMetadata(metadata);
        w.commit(file(name));
        return file(name);
    }
    std::string file(const std::string& name) const { return (dir_ / name).string(); }
    static std::string meta(int64_t run, int64_t step, const std::string& extra = "") {
        return R"({"run_id": )" + std::to_string(run) + R"(, "step": )" + std::to_string(step) + extra + "}";
    }
    template <class Fn>
    static std::string errorOf(Fn fn) {
        try {
            fn();
        } catch (const std::exception& e) {
            return e.what();
        }
        ADD_FAILURE() << "expected an error";
        return {};
    }

    fs::path dir_;
    std::string db_;
};

WarmStartConfig byRun(int64_t run, bool carry = false) { return {run, "", carry}; }
WarmStartConfig byFile(const std::string& path, bool carry = false) { return {0, path, carry}; }

TEST_F(WarmStartSourceTest, ARunsCheckpointIsFoundThroughItsRecordedPath) {
    const int64_t id = addRun("pretrain", file("a.ckpt"));
    writeCheckpoint("a.ckpt", meta(id, 40));
    const WarmStartSource s = openWarmStart(byRun(id), db_);
    EXPECT_EQ(s.checkpoint.path(), file("a.ckpt"));
    EXPECT_EQ(s.run, id);
    EXPECT_EQ(s.step, 40);
    EXPECT_EQ(s.context(), "train.warm_start.run: run " + std::to_string(id) + "'s checkpoint");
    using Attributes = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(s.attributes(), (Attributes{{"warm_start.checkpoint", file("a.ckpt")},
                                          {"warm_start.optimizer", "fresh"},
                                          {"warm_start.step", "40"}}));
    EXPECT_EQ(s.carry_optimizer, false);
}

TEST_F(WarmStartSourceTest, AFileNamesItsRunOnlyWhenThatRunRecordedThisVeryFile) {
    const int64_t id = addRun("pretrain", file("a.ckpt"));
    writeCheckpoint("a.ckpt", meta(id, 40));
    EXPECT_EQ(openWarmStart(byFile(file("a.ckpt")), db_).run, id);
    EXPECT_EQ(openWarmStart(byFile(file("a.ckpt")), db_).context(),
              "train.warm_start.checkpoint (run " + std::to_string(id) + ")");
    // A copy claims the run in its metadata, but the run recorded another file: unknown.
    fs::copy_file(file("a.ckpt"), file("copy.ckpt"));
    EXPECT_EQ(openWarmStart(byFile(file("copy.ckpt")), db_).run, std::nullopt);
    // No store at all (a checkpoint from elsewhere): still a valid source, of no known run.
    const WarmStartSource elsewhere = openWarmStart(byFile(file("a.ckpt")), file("none.db"));
    EXPECT_EQ(elsewhere.run, std::nullopt);
    EXPECT_EQ(elsewhere.step, 40);
    EXPECT_FALSE(fs::exists(file("none.db"))) << "looking a run up creates no store";
}

TEST_F(WarmStartSourceTest, AMissingOrUnusableSourceNamesTheKeyTheRunAndTheFile) {
    const int64_t none = addRun("no-checkpoint");
    const int64_t gone = addRun("deleted", file("gone.ckpt"));
    const int64_t broken = addRun("broken", file("broken.ckpt"));
    std::ofstream(file("broken.ckpt")) << "not a checkpoint";
    const int64_t replaced = addRun("replaced", file("shared.ckpt"));
    const int64_t later = addRun("later", file("shared.ckpt"));
    writeCheckpoint("shared.ckpt", meta(later, 9));

    EXPECT_EQ(errorOf([&] { openWarmStart(byRun(99), db_); }), "train.warm_start.run: there is no run 99 in " + db_);
    EXPECT_EQ(errorOf([&] { openWarmStart(byRun(none), db_); }),
              "train.warm_start.run: run " + std::to_string(none) +
                  " kept no checkpoint (it ran without train.checkpoint_every_steps and train.checkpoint_at_end)");
    EXPECT_EQ(errorOf([&] { openWarmStart(byRun(gone), db_); }),
              "train.warm_start.run: run " + std::to_string(gone) + "'s checkpoint: " + file("gone.ckpt") +
                  ": cannot open checkpoint: No such file or directory");
    EXPECT_EQ(errorOf([&] { openWarmStart(byRun(broken), db_); })
                  .rfind("train.warm_start.run: run " + std::to_string(broken) + "'s checkpoint: " + file("broken.ckpt") +
                             ": not a trainbench checkpoint: bad magic at byte offset 0",
                         0),
              0u);
    EXPECT_EQ(errorOf([&] { openWarmStart(byRun(replaced), db_); }),
              "train.warm_start.run: run " + std::to_string(replaced) + "'s checkpoint " + file("shared.ckpt") +
                  " now holds run " + std::to_string(later) +
                  "'s parameters (a later run with the same train.checkpoint_path replaced it)");
    EXPECT_EQ(errorOf([&] { openWarmStart(byFile(file("nothere.ckpt")), db_); }),
              "train.warm_start.checkpoint: " + file("nothere.ckpt") + ": cannot open checkpoint: No such file or directory");
    EXPECT_EQ(errorOf([&] { openWarmStart(byRun(1), file("none.db")); }).rfind("train.warm_start.run: cannot look run 1 up in ", 0),
              0u);
}

TEST_F(WarmStartSourceTest, CarryingTheOptimizerCountsEveryUpdateItsStateHasTaken) {
    const int64_t id = addRun("pretrain", file("a.ckpt"));
    // The source itself carried 100 updates from its own source, then took 40.
    writeCheckpoint("a.ckpt", meta(id, 40, R"(, "optimizer_steps_before": 100)"));
    const WarmStartSource s = openWarmStart(byRun(id, /*carry=*/true), db_);
    EXPECT_EQ(s.carry_optimizer, true);
    EXPECT_EQ(s.optimizer_steps, 140);
    EXPECT_EQ(s.attributes()[1], (std::pair<std::string, std::string>{"warm_start.optimizer", "carry"}));

    // Metadata that does not say its step: the parameters do, the optimizer's count does not.
    writeCheckpoint("other.ckpt", "written by another tool");
    EXPECT_EQ(openWarmStart(byFile(file("other.ckpt")), db_).step, std::nullopt);
    EXPECT_EQ(errorOf([&] { openWarmStart(byFile(file("other.ckpt"), true), db_); }),
              "train.warm_start.checkpoint: " + file("other.ckpt") +
                  ": cannot carry the optimizer over: the checkpoint's metadata does not say at which step it was saved");
}

TEST(WarmStartKeys, OneSourceAtMostAndTheValuesReachTheExperiment) {
    using testing::errorOf;
    using testing::withModel;
    EXPECT_EQ(errorOf(withModel(R"("train": {"warm_start": {"run": 3, "checkpoint": "a.ckpt"}},)")),
              "test.json: train.warm_start: give only one of 'run', 'checkpoint', not both");
    EXPECT_NE(errorOf(withModel(R"("train": {"warm_start": {"run": 0}},)")).find("train.warm_start.run: must be >= 1"),
              std::string::npos);
    EXPECT_NE(errorOf(withModel(R"("train": {"warm_start": {"optimizer": "keep"}},)")).find("train.warm_start.optimizer"),
              std::string::npos);

    const Experiment none = parseExperiment(withModel(), "dir/test.json");
    EXPECT_FALSE(none.warm_start.given());
    EXPECT_FALSE(none.train.checkpoint_at_end);
    const Experiment run = parseExperiment(withModel(), "dir/test.json",
                                           {"train.warm_start.run=3", "train.warm_start.optimizer=carry",
                                            "train.checkpoint_at_end=true"});
    EXPECT_EQ(run.warm_start.run, 3);
    EXPECT_TRUE(run.warm_start.carry_optimizer);
    EXPECT_TRUE(run.train.checkpoint_at_end);
    const Experiment file = parseExperiment(withModel(R"("train": {"warm_start": {"checkpoint": "ck/a.ckpt"}},)"),
                                            "/data/exp/test.json");
    EXPECT_EQ(file.warm_start.checkpoint, "/data/exp/ck/a.ckpt") << "relative to the experiment file";
    EXPECT_FALSE(file.warm_start.carry_optimizer);
}

}  // namespace
}  // namespace trainbench::app
