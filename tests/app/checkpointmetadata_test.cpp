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

TEST(CheckpointMetadata, DeeplyNestedMetadataIsRefusedBeforeItIsParsed) {
    // A checkpoint from elsewhere: 100,000 levels of '[' would overflow the stack when the document is
    // copied; the limit names the file and where the nesting passed it.
    const engine::Checkpoint deep = written(std::string(100000, '[') + std::string(100000, ']'));
    try {
        runIdFromMetadata(deep);
        FAIL() << "accepted";
    } catch (const engine::CheckpointError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(".ckpt: checkpoint metadata: nesting deeper than 32 levels"), std::string::npos) << what;
        EXPECT_NE(what.find("byte 32 (line 1, column 33)"), std::string::npos) << what;
    }
    const std::string within = std::string(31, '[') + std::string(31, ']');
    EXPECT_THROW(runIdFromMetadata(written(within)), engine::CheckpointError) << "parsed, but holds no run id";
}

}  // namespace
}  // namespace trainbench::app
