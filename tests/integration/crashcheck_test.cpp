// The crash loop's checker (tests/crashloop, scripts/crash-loop.sh) finds what it is there to find:
// a store or checkpoint doctored the way a broken writer would leave it is reported as a violation
// naming the run, the step or the file; an intact one is not.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/run/checkpointmetadata.h"
#include "engine/checkpoint/checkpoint.h"
#include "profiler/store/runwriter.h"
#include "tests/integration/clirunner.h"
#include "tests/profiler/storetestutil.h"

using namespace trainbench;
using trainbench::testing::TempDir;

namespace {

class CrashCheck : public ::testing::Test {
protected:
    void SetUp() override {
        profiler::RunWriter writer(db_, profiler::RunSpec{});
        for (int64_t s = 1; s <= 5; ++s) writer.step(profiler::testutil::makeStep(s));
        writer.eval(profiler::testutil::makeEval(5));
        engine::RunSummary summary;
        summary.steps = 5;
        summary.stop_reason = engine::StopReason::Epochs;
        writer.finish(profiler::RunStatus::Completed, summary);
        std::filesystem::create_directories(std::filesystem::path(checkpoint_).parent_path());
    }

    // The checker's output: "key: value" facts and "VIOLATION: ..." lines.
    std::string check() {
        const std::string command = std::string(TRAINBENCH_CRASHCHECK_PATH) + " check --db " + db_ + " --checkpoint " +
                                    checkpoint_ + " --every 5 --state " + (tmp_.path / "state").string();
        FILE* pipe = ::popen(command.c_str(), "r");
        std::string out;
        char buffer[4096];
        while (pipe && std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
        if (pipe) ::pclose(pipe);
        return out;
    }

    void writeCheckpoint(int64_t run, int64_t step) {
        engine::CheckpointWriter w;
        const std::vector<float> params(16, 0.5f);
        w.addFloats("params", params);
        w.add("model.layout", "dense 16 0 4 4\n", 15);
        engine::TrainProgress at;
        at.step = step;
        w.setMetadata(app::progressMetadata(at, run));
        w.commit(checkpoint_);
    }

    TempDir tmp_;
    std::string db_ = (tmp_.path / "store" / "runs.db").string();
    std::string checkpoint_ = (tmp_.path / "checkpoints" / "model.ckpt").string();
};

TEST_F(CrashCheck, AnIntactStoreAndCheckpointPass) {
    writeCheckpoint(1, 5);
    const std::string out = check();
    EXPECT_EQ(out.find("VIOLATION"), std::string::npos) << out;
    EXPECT_NE(out.find("checkpoint: new (run 1, step 5"), std::string::npos) << out;
    EXPECT_NE(check().find("checkpoint: old (run 1, step 5"), std::string::npos);
}

TEST_F(CrashCheck, AGapInTheStepsAndAnEvaluationOfNoRecordedStepAreViolations) {
    profiler::testutil::RawDb raw(db_);
    raw.exec("DELETE FROM steps WHERE step = 3");
    raw.exec("INSERT INTO evals (run_id, step, epoch, split, accuracy) VALUES (1, 9, 0, 'test', 0.5)");
    const std::string out = check();
    EXPECT_NE(out.find("VIOLATION: run 1: steps not contiguous: step 4 where step 3 belongs"), std::string::npos) << out;
    EXPECT_NE(out.find("VIOLATION: run 1: evaluation at step 9, which is not recorded"), std::string::npos) << out;
    EXPECT_NE(out.find("VIOLATION: run 1: completed with steps = 5, but 4 steps are stored"), std::string::npos) << out;
}

TEST_F(CrashCheck, ARunThatLosesStepsAfterItWasCheckedIsAViolation) {
    ASSERT_EQ(check().find("VIOLATION"), std::string::npos);
    profiler::testutil::RawDb(db_).exec("DELETE FROM steps WHERE step = 5; UPDATE runs SET steps = 4");
    const std::string out = check();
    EXPECT_NE(out.find("VIOLATION: run 1 changed after it was checked: was completed with 5 steps"), std::string::npos)
        << out;
}

TEST_F(CrashCheck, AHalfCheckpointAForeignOneAndStrayFilesAreViolations) {
    writeCheckpoint(1, 5);
    ASSERT_EQ(check().find("VIOLATION"), std::string::npos);
    std::filesystem::resize_file(checkpoint_, std::filesystem::file_size(checkpoint_) - 3);
    std::ofstream(checkpoint_ + ".partial") << "x";
    std::string out = check();
    EXPECT_NE(out.find("VIOLATION: the checkpoint is neither the old nor a whole new one: " + checkpoint_),
              std::string::npos) << out;
    EXPECT_NE(out.find("VIOLATION: " + checkpoint_ + ".partial: unexpected file"), std::string::npos) << out;

    std::filesystem::remove(checkpoint_ + ".partial");
    writeCheckpoint(7, 10);  // run 7 never ran here
    out = check();
    EXPECT_NE(out.find("but run 7 did not run since the last check"), std::string::npos) << out;
    // A killed writer's temporary file is counted, not a violation.
    const std::filesystem::path path(checkpoint_);
    std::ofstream(path.parent_path() / ("." + path.filename().string() + ".trainbench-tmp-4711-0")) << "x";
    out = check();
    EXPECT_NE(out.find("leftover_temp_files: 1"), std::string::npos) << out;
}

}  // namespace
