// MODEL given as a run: the checkpoint a training run kept, opened with its experiment's spec,
// data shape and input scaling, predicts exactly what the run's own evaluation measured; every way
// the run can be missing or unusable fails naming MODEL and the store.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "app/experiment/experiment.h"
#include "app/inference/modelsource.h"
#include "tests/app/errorof.h"
#include "tests/app/trainedrun.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;

class ModelSourceTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("trainbench-modelsource-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }

    profiler::RunId train(const std::string& preset) { return testing::trainBriefly(dir_, db_, preset); }
    double recordedAccuracy(profiler::RunId id) {
        profiler::RunStore store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
        const auto evals = store.evals(id);
        EXPECT_FALSE(evals.empty());
        return evals.empty() ? -1.0 : evals.back().accuracy;
    }
    // Top-1 accuracy of the graph, compiled, on the source's test set. The test set holds scaled
    // pixels; the graph takes stored ones, so they are scaled back (exactly: k/255*255 rounds to k).
    static double accuracy(const ModelSource& m) {
        const engine::EvalSet& test = m.data.test;
        std::vector<float> raw(test.x.size());
        for (size_t i = 0; i < raw.size(); ++i) raw[i] = test.x[i] / m.graph.metadata.input_scale;
        engine::CpuDevice device(1);
        engine::inference::CompiledGraph compiled(engine::graph::optimizeForInference(m.graph), device);
        const int64_t classes = compiled.classes();
        std::vector<float> logits(static_cast<size_t>(test.count * classes));
        int64_t correct = 0;
        for (int64_t first = 0; first < test.count; first += 500) {
            const int64_t n = std::min<int64_t>(500, test.count - first);
            compiled.run(raw.data() + first * test.exampleSize(), n, logits.data());
            for (int64_t i = 0; i < n; ++i) {
                const float* row = logits.data() + i * classes;
                correct += (std::max_element(row, row + classes) - row) == test.labels[static_cast<size_t>(first + i)];
            }
        }
        return static_cast<double>(correct) / static_cast<double>(test.count);
    }

    fs::path dir_;
    std::string db_;
};

TEST_F(ModelSourceTest, ARunsCheckpointPredictsWhatItsEvaluationMeasured) {
    for (const std::string preset : {"mlp", "cnn"}) {
        const profiler::RunId id = train(preset);
        const ModelSource m = openModel(std::to_string(id.value), db_);
        EXPECT_EQ(m.run, id);
        EXPECT_EQ(m.graph.sample_shape, (engine::graph::Dims{1, 28, 28}));
        EXPECT_EQ(m.graph.classes, 10);
        EXPECT_FLOAT_EQ(m.graph.metadata.input_scale, 1.0f / 255.0f);
        EXPECT_NE(m.description.find("run " + std::to_string(id.value) + " (src-" + preset + ")"), std::string::npos)
            << m.description;
        EXPECT_EQ(m.data.test.count, 10000);
        // Same parameters, same test set: the same answers, up to an fp32 near-tie or two.
        EXPECT_NEAR(accuracy(m), recordedAccuracy(id), 2e-4) << preset;
    }
}

TEST_F(ModelSourceTest, ARunIsFoundByName) {
    const profiler::RunId id = train("mlp");
    EXPECT_EQ(openModel("src-mlp", db_).run, id);
}

TEST_F(ModelSourceTest, AMissingRunOrAStoreThatIsNotThereNamesModelAndStore) {
    train("mlp");
    const std::string e = testing::messageOf([&] { openModel("99", db_); });
    EXPECT_NE(e.find("MODEL '99': there is no run '99' in " + db_), std::string::npos) << e;
    const std::string missing = (dir_ / "nowhere.db").string();
    const std::string e2 = testing::messageOf([&] { openModel("1", missing); });
    EXPECT_NE(e2.find("MODEL '1'"), std::string::npos) << e2;
    EXPECT_NE(e2.find(missing), std::string::npos) << e2;
}

TEST_F(ModelSourceTest, ARunWithoutACheckpointSaysHowToKeepOne) {
    profiler::RunSpec spec;
    spec.name = "no-ckpt";
    profiler::RunWriter w(db_, spec);
    w.finish(profiler::RunStatus::Completed, {});
    const std::string e = testing::messageOf([&] { openModel("no-ckpt", db_); });
    EXPECT_NE(e.find("kept no checkpoint"), std::string::npos) << e;
    EXPECT_NE(e.find("train.checkpoint_at_end"), std::string::npos) << e;
}

TEST_F(ModelSourceTest, ACheckpointThatIsGoneNamesTheFile) {
    const profiler::RunId id = train("mlp");
    const std::string ckpt = (dir_ / "mlp.ckpt").string();
    fs::remove(ckpt);
    const std::string e = testing::messageOf([&] { openModel(std::to_string(id.value), db_); });
    EXPECT_NE(e.find(ckpt), std::string::npos) << e;
}

}  // namespace
}  // namespace trainbench::app
