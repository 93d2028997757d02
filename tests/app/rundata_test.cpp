// openRunData, the stage that opens a run's data: a small part of the real Fashion-MNIST files
// (Debian's dataset-fashion-mnist), opened for the run's global batch and said in one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "app/experiment/experiment.h"
#include "app/run/rundata.h"
#include "engine/data/dataconfig.h"

namespace trainbench::app {
namespace {

bool haveFashionMnist() {
    return std::filesystem::exists(std::filesystem::path(engine::kDefaultFashionMnistDir) / "train-images-idx3-ubyte.gz");
}

TEST(RunData, OpensAFractionOfFashionMnistForTheGlobalBatch) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    const Experiment x = parseExperiment(
        R"({"data": {"dataset": "fashion-mnist", "fraction": 0.01}, "model": {"preset": "mlp"}})", "test.json");
    std::vector<std::string> said;
    const engine::TrainingData d = openRunData(x, 50, [&](const std::string& m) { said.push_back(m); }, nullptr);
    EXPECT_EQ(d.channels, 1);
    EXPECT_EQ(d.height, 28);
    EXPECT_EQ(d.width, 28);
    EXPECT_EQ(d.num_classes, 10);
    EXPECT_EQ(d.train_examples, 600);
    EXPECT_EQ(d.train->batchesPerEpoch(), 12);  // 600 examples in batches of 50
    EXPECT_EQ(d.test.count, 10000);             // the test set is never cut
    ASSERT_FALSE(said.empty());
    EXPECT_EQ(said.back(), "data: " + d.description);
}

// The input pipeline's choices are kept with the run: what it reads and the storage it reads from.
TEST(RunData, PipelineAttributesNameTheSourceAndStorage) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    const Experiment x = parseExperiment(
        R"({"data": {"dataset": "fashion-mnist", "fraction": 0.01}, "model": {"preset": "mlp"}})", "test.json");
    const engine::TrainingData d = openRunData(x, 50, [](const std::string&) {}, nullptr);
    const auto a = pipelineAttributes(d);
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a.front(), (std::pair<std::string, std::string>{"input.source", d.description}));
    EXPECT_NE(std::find_if(a.begin(), a.end(), [](const auto& kv) { return kv.first == "storage.preset"; }), a.end());
}

}  // namespace
}  // namespace trainbench::app
