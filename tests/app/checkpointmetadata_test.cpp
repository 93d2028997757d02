// A run's checkpoint metadata: where training stood, and the count of updates a carried optimizer
// state brought along, which a restarted job must get back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "app/run/checkpointmetadata.h"
#include "engine/util/errors.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;

engine::Checkpoint written(const std::string& metadata) {
    const fs::path file = fs::temp_directory_path() / ("trainbench-meta-" + std::to_string(::getpid()) + ".ckpt");
    engine::CheckpointWriter w;
    w.setMetadata(metadata);
    w.commit(file.string());
    engine::Checkpoint ck = engine::Checkpoint::read(file.string());
    fs::remove(file);
    return ck;
}

TEST(CheckpointMetadata, ACarriedCountOfUpdatesComesBackAndIsAbsentOtherwise) {
    engine::TrainProgress p;
    p.step = 12;
    p.epoch = 1;
    p.batch_in_epoch = 3;
    p.summary.best_accuracy = 0.5;
    const engine::Checkpoint carried = written(progressMetadata(p, 7, 140));
    EXPECT_EQ(optimizerStepsBeforeFromMetadata(carried), 140);
    EXPECT_EQ(runIdFromMetadata(carried), 7);
    const engine::TrainProgress back = progressFromMetadata(carried);
    EXPECT_EQ(back.step, 12);
    EXPECT_EQ(back.batch_in_epoch, 3);
    EXPECT_EQ(back.summary.best_accuracy, 0.5);

    const std::string plain = progressMetadata(p, 7);
    EXPECT_EQ(plain.find("optimizer_steps_before"), std::string::npos) << "unchanged for runs that carry nothing";
    EXPECT_EQ(optimizerStepsBeforeFromMetadata(written(plain)), 0);
    const engine::Checkpoint bad = written(R"({"optimizer_steps_before": "many"})");
    EXPECT_THROW(optimizerStepsBeforeFromMetadata(bad), engine::CheckpointError);
}

}  // namespace
}  // namespace trainbench::app
