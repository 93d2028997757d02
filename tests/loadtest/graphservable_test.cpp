// The servable over a trained run's CompiledGraph (app/inference/graphservable.h) behind the real
// inference server on loopback: its answers are CompiledGraph::run's for the same stored pixels.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/inference/graphservable.h"
#include "app/inference/modelsource.h"
#include "engine/data/idxreader.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/serving/servingserver.h"
#include "tests/app/trainedrun.h"
#include "tests/engine/serving/httpclient.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;
using engine::serving::test::HttpClient;

class GraphServableTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = fs::temp_directory_path() / ("trainbench-graphservable-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
        app::testing::trainBriefly(dir_, db_, "mlp");
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }

    // Test-set images as the IDX file stores them (0-255), not scaled: what a client sends.
    static std::vector<float> storedPixels(int64_t count) {
        const engine::IdxArray idx = engine::readIdx("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz");
        return std::vector<float>(idx.data.begin(), idx.data.begin() + count * 784);
    }

    // {"instances": [[[[row] x 28]] ...]}: each example of shape {1, 28, 28}.
    static std::string body(const std::vector<float>& x, int64_t first, int64_t n) {
        nlohmann::json instances = nlohmann::json::array();
        for (int64_t i = first; i < first + n; ++i) {
            nlohmann::json rows = nlohmann::json::array();
            for (int r = 0; r < 28; ++r)
                rows.push_back(std::vector<float>(x.begin() + i * 784 + r * 28, x.begin() + i * 784 + r * 28 + 28));
            instances.push_back(nlohmann::json::array({rows}));
        }
        return nlohmann::json{{"instances", instances}}.dump();
    }

    static inline fs::path dir_;
    static inline std::string db_;
};

TEST_F(GraphServableTest, ServedPredictionsAreTheCompiledGraphsForTheSameExamples) {
    const app::ModelSource model = app::openModel("src-mlp", db_);
    EXPECT_EQ(model.name, "src-mlp");
    engine::serving::ServingOptions options;
    options.batching.max_batch_size = 32;
    options.batching.batch_timeout_micros = 2000;
    options.batching.num_batch_threads = 2;
    engine::serving::ServingServer server(app::graphServable(model.graph, {"fmnist", 1, 32}), options);
    server.start();

    const int64_t n = 12;
    const std::vector<float> x = storedPixels(n);
    engine::CpuDevice device(1);
    device.bindThreads();
    engine::inference::CompiledGraph local(engine::graph::optimizeForInference(model.graph), device);
    std::vector<float> expected(static_cast<size_t>(n * 10));
    local.run(x.data(), n, expected.data());

    HttpClient meta(server.port());
    const auto metadata = meta.request("GET", "/v1/models/fmnist/metadata");
    ASSERT_EQ(metadata.status, 200) << metadata.body << metadata.error;

    // One request of one example, one of several: batched either way by the server.
    for (const auto& [first, count] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 11}}) {
        HttpClient client(server.port());
        const auto reply = client.request("POST", "/v1/models/fmnist:predict", body(x, first, count));
        ASSERT_EQ(reply.status, 200) << reply.body << reply.error;
        const auto predictions = nlohmann::json::parse(reply.body).at("predictions");
        ASSERT_EQ(predictions.size(), static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) {
            ASSERT_EQ(predictions[i].size(), 10u);
            for (int c = 0; c < 10; ++c) {
                const float want = expected[static_cast<size_t>((first + i) * 10 + c)];
                EXPECT_NEAR(predictions[i][c].get<float>(), want, 1e-4f * std::max(1.0f, std::abs(want)))
                    << "example " << first + i << " class " << c;
            }
        }
    }
    server.stop();
}

// An instance compiles a plan per size of this ladder and pads each batch up to the next one:
// bounded plans, at most a quarter of a batch's work padding. (The test above sends 11 examples,
// run as 12.)
TEST(GraphServable, PlanSizesClimbByAQuarterAtMostAndEndAtTheLargestBatch) {
    EXPECT_EQ(app::planSizes(1), (std::vector<int64_t>{1}));
    EXPECT_EQ(app::planSizes(6), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(app::planSizes(32), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 28, 32}));
    for (int64_t maxBatch : {9, 64, 1000, 65536}) {
        const std::vector<int64_t> sizes = app::planSizes(maxBatch);
        EXPECT_EQ(sizes.back(), maxBatch);
        EXPECT_LE(sizes.size(), 60u) << maxBatch;
        for (size_t i = 8; i < sizes.size(); ++i) {
            EXPECT_GT(sizes[i], sizes[i - 1]);
            // The largest batch padded up to sizes[i] is sizes[i - 1] + 1: padding <= 25 % of the work.
            EXPECT_LE(sizes[i] - (sizes[i - 1] + 1), sizes[i] / 4 + 3) << maxBatch << " at " << sizes[i];
        }
    }
    EXPECT_THROW(app::planSizes(0), std::invalid_argument);
}

TEST(GraphServable, AnEmptyNameOrANegativeThreadBudgetIsRefused) {
    engine::graph::Graph g;
    EXPECT_THROW(app::graphServable(g, {"", 1, 8}), std::invalid_argument);
    EXPECT_THROW(app::graphServable(g, {"m", -1, 8}), std::invalid_argument);
}

}  // namespace
}  // namespace trainbench
