// MODEL given as a run: the checkpoint a training run kept, opened with its experiment's spec,
// data shape and input scaling, predicts exactly what the run's own evaluation measured; every way
// the run can be missing or unusable fails naming MODEL and the store. MODEL given as an ONNX file:
// the same graph without a store, with no run and no data, and what needs them says so.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/experiment/experiment.h"
#include "app/inference/modelsource.h"
#include "tests/app/errorof.h"
#include "tests/app/trainedrun.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxexport.h"
#include "app/inference/calibrationset.h"
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
        const engine::EvalSet& test = m.run->data.test;
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
        ASSERT_TRUE(m.run.has_value());
        EXPECT_EQ(m.run->id, id);
        EXPECT_TRUE(m.file.empty());
        EXPECT_EQ(m.graph.sample_shape, (engine::graph::Dims{1, 28, 28}));
        EXPECT_EQ(m.graph.classes, 10);
        EXPECT_FLOAT_EQ(m.graph.metadata.input_scale, 1.0f / 255.0f);
        EXPECT_NE(m.description.find("run " + std::to_string(id.value) + " (src-" + preset + ")"), std::string::npos)
            << m.description;
        EXPECT_EQ(m.run->data.test.count, 10000);
        // Same parameters, same test set: the same answers, up to an fp32 near-tie or two.
        EXPECT_NEAR(accuracy(m), recordedAccuracy(id), 2e-4) << preset;
    }
}

TEST_F(ModelSourceTest, ARunIsFoundByName) {
    const profiler::RunId id = train("mlp");
    EXPECT_EQ(openModel("src-mlp", db_).run->id, id);
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


TEST_F(ModelSourceTest, AnOnnxFileIsTheRunsGraphWithoutAStoreOrData) {
    const profiler::RunId id = train("mlp");
    const ModelSource fromRun = openModel(std::to_string(id.value), db_);
    const std::string file = (dir_ / "w1.onnx").string();
    engine::onnx::writeOnnx(fromRun.graph, file);
    // The store is not read for a file: one that does not exist does not matter.
    const ModelSource m = openModel(file, (dir_ / "nowhere.db").string());
    EXPECT_FALSE(m.run.has_value());
    EXPECT_EQ(m.file, file);
    EXPECT_EQ(m.name, "w1");
    EXPECT_NE(m.description.find("ONNX file " + file), std::string::npos) << m.description;
    EXPECT_NE(m.description.find("exported from run " + std::to_string(id.value) + " (src-mlp) of " + db_),
              std::string::npos) << m.description;
    EXPECT_EQ(m.graph.sample_shape, fromRun.graph.sample_shape);
    EXPECT_EQ(m.graph.classes, fromRun.graph.classes);
    EXPECT_EQ(m.graph.metadata.input_scale, fromRun.graph.metadata.input_scale);
    ASSERT_EQ(m.graph.initializers.size(), fromRun.graph.initializers.size());
    for (const auto& [name, init] : fromRun.graph.initializers) {
        ASSERT_TRUE(m.graph.initializers.count(name)) << name;
        EXPECT_EQ(m.graph.initializers.at(name).values, init.values) << name;
    }
    // What needs the run's data says that this model has none.
    const std::string e = testing::messageOf([&] { requireRun(m, "calibration"); });
    EXPECT_NE(e.find("calibration needs the model's training data"), std::string::npos) << e;
    EXPECT_NE(e.find(file), std::string::npos) << e;
    EXPECT_NE(testing::messageOf([&] { calibrationExamples(m, 8, 1); }).find(file), std::string::npos);
}

TEST_F(ModelSourceTest, AFileOfAnotherNameIsAModelWhenItsBytesParse) {
    const profiler::RunId id = train("mlp");
    const std::string file = (dir_ / "exported-model").string();
    engine::onnx::writeOnnx(openModel(std::to_string(id.value), db_).graph, file);
    const ModelSource m = openModel(file, db_);
    EXPECT_FALSE(m.run.has_value());
    EXPECT_EQ(m.name, "exported-model");
    // A file that is no model, and no run of that name: both are said.
    const std::string junk = (dir_ / "notes.txt").string();
    std::ofstream(junk) << "not a model";
    const std::string e = testing::messageOf([&] { openModel(junk, db_); });
    EXPECT_NE(e.find(junk + ": not an ONNX model"), std::string::npos) << e;
    EXPECT_NE(e.find("nor is it a run"), std::string::npos) << e;
}

TEST_F(ModelSourceTest, AMissingOrCorruptOnnxFileIsNamed) {
    const std::string missing = (dir_ / "gone.onnx").string();
    try {
        openModel(missing, db_);
        ADD_FAILURE() << "a missing file opened";
    } catch (const engine::onnx::OnnxError& e) {
        EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    }
    const std::string corrupt = (dir_ / "corrupt.onnx").string();
    std::ofstream(corrupt, std::ios::binary) << std::string("\x08\x08\x12\xff\xff\xff garbage");
    const std::string e = testing::messageOf([&] { openModel(corrupt, db_); });
    EXPECT_NE(e.find(corrupt + ": not an ONNX model"), std::string::npos) << e;
}

TEST_F(ModelSourceTest, AMissingRunIsModelNotFound) {
    train("mlp");
    EXPECT_THROW(openModel("no-such-run", db_), ModelNotFound);
    EXPECT_TRUE(namesOnnxFile("m.onnx"));
    EXPECT_FALSE(namesOnnxFile(".onnx"));
    EXPECT_FALSE(namesOnnxFile("12"));
}

}  // namespace
}  // namespace trainbench::app
