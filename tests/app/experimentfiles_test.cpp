// The shipped experiments, defaults in `resolved`, relative paths and the file API.
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "app/experiment/experiment.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;
using engine::LayerKind;

std::string shipped(const std::string& name) { return std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/" + name; }

// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
public:
    TempDir() : path_(fs::temp_directory_path() / ("trainbench-exp-test-" + std::to_string(::getpid()))) {
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }
    fs::path write(const std::string& name, const std::string& text) const {
        const fs::path p = path_ / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return p;
    }

private:
    fs::path path_;
};

// The benchmark's shared settings (benchmarks.md): Fashion-MNIST, batch 128, reshuffled with a fixed
// seed, Adam 1e-3 / 0.9 / 0.999 / 1e-7, evaluation every 100 steps and at epoch end, all cores.
void expectBenchmarkSettings(const Experiment& e) {
    EXPECT_EQ(e.data.dataset, "fashion-mnist");
    EXPECT_EQ(e.data.path, engine::kDefaultFashionMnistDir);
    EXPECT_EQ(e.data.train_limit, 0);
    EXPECT_EQ(e.data.test_limit, 0);
    EXPECT_TRUE(e.data.shuffle);
    EXPECT_EQ(e.train.seed, 42u);
    EXPECT_EQ(e.optimizer.kind, engine::OptimizerKind::Adam);
    EXPECT_FLOAT_EQ(e.optimizer.learning_rate, 1e-3f);
    EXPECT_FLOAT_EQ(e.optimizer.beta1, 0.9f);
    EXPECT_FLOAT_EQ(e.optimizer.beta2, 0.999f);
    EXPECT_FLOAT_EQ(e.optimizer.epsilon, 1e-7f);
    EXPECT_FLOAT_EQ(e.optimizer.weight_decay, 0.0f);
    EXPECT_EQ(e.optimizer.warmup_steps, 0);
    EXPECT_EQ(e.train.batch_size, 128);
    EXPECT_EQ(e.train.max_steps, 0);
    EXPECT_EQ(e.train.eval_every_steps, 100);
    EXPECT_TRUE(e.train.eval_at_epoch_end);
    EXPECT_FALSE(e.train.stop_at_target);
    EXPECT_EQ(e.train.threads, 0);
}

TEST(ExperimentFiles, W1MlpMatchesTheBenchmark) {
    const Experiment e = loadExperimentFile(shipped("fmnist-mlp.json"));
    EXPECT_EQ(e.name, "fmnist-mlp");
    expectBenchmarkSettings(e);
    EXPECT_EQ(e.train.epochs, 5);
    EXPECT_DOUBLE_EQ(e.train.target_accuracy, 0.88);
    EXPECT_EQ(e.model.preset, "mlp");
    // 784 -> Dense 512 ReLU -> Dense 256 ReLU -> Dense 10.
    const auto& l = e.model.layers;
    ASSERT_EQ(l.size(), 6u);
    EXPECT_EQ(l[0].kind, LayerKind::Flatten);
    EXPECT_EQ(l[1].kind, LayerKind::Dense);
    EXPECT_EQ(l[1].units, 512);
    EXPECT_EQ(l[2].kind, LayerKind::ReLU);
    EXPECT_EQ(l[3].kind, LayerKind::Dense);
    EXPECT_EQ(l[3].units, 256);
    EXPECT_EQ(l[4].kind, LayerKind::ReLU);
    EXPECT_EQ(l[5].kind, LayerKind::Dense);
    EXPECT_EQ(l[5].units, 10);
}

TEST(ExperimentFiles, W2CnnMatchesTheBenchmark) {
    const Experiment e = loadExperimentFile(shipped("fmnist-cnn.json"));
    EXPECT_EQ(e.name, "fmnist-cnn");
    expectBenchmarkSettings(e);
    EXPECT_EQ(e.train.epochs, 10);
    EXPECT_DOUBLE_EQ(e.train.target_accuracy, 0.90);
    EXPECT_EQ(e.model.preset, "cnn");
    // Conv 3x3 32 ReLU, MaxPool 2, Conv 3x3 64 ReLU, MaxPool 2, Flatten, Dense 128 ReLU, Dense 10; valid padding.
    const auto& l = e.model.layers;
    ASSERT_EQ(l.size(), 10u);
    const LayerKind kinds[] = {LayerKind::Conv2D, LayerKind::ReLU,    LayerKind::MaxPool2D, LayerKind::Conv2D,
                               LayerKind::ReLU,   LayerKind::MaxPool2D, LayerKind::Flatten, LayerKind::Dense,
                               LayerKind::ReLU,   LayerKind::Dense};
    for (std::size_t i = 0; i < l.size(); ++i) EXPECT_EQ(l[i].kind, kinds[i]) << "layer " << i;
    EXPECT_EQ(l[0].filters, 32);
    EXPECT_EQ(l[0].kernel, 3);
    EXPECT_EQ(l[0].padding, 0);
    EXPECT_EQ(l[2].kernel, 2);
    EXPECT_EQ(l[3].filters, 64);
    EXPECT_EQ(l[3].kernel, 3);
    EXPECT_EQ(l[3].padding, 0);
    EXPECT_EQ(l[5].kernel, 2);
    EXPECT_EQ(l[7].units, 128);
    EXPECT_EQ(l[9].units, 10);
}

TEST(ExperimentFiles, LogregParses) {
    const Experiment e = loadExperimentFile(shipped("fmnist-logreg.json"));
    EXPECT_EQ(e.name, "fmnist-logreg");
    EXPECT_EQ(e.model.preset, "logreg");
    EXPECT_EQ(e.model.layers.size(), engine::presetLayers("logreg").size());
    EXPECT_EQ(e.train.epochs, 3);
    EXPECT_GT(e.train.target_accuracy, 0.0);
    EXPECT_EQ(e.train.batch_size, 128);
}

TEST(ExperimentFiles, ResolvedFillsEveryDefaultAndKeepsThePresetByName) {
    const Experiment e = parseExperiment(R"({"model": {"preset": "mlp"}})", "dir/my-run.json");
    const auto& r = e.resolved;
    EXPECT_EQ(r["name"], "my-run");  // the file stem
    EXPECT_EQ(e.name, "my-run");
    EXPECT_EQ(r["description"], "");
    EXPECT_EQ(r["seed"], 42);
    EXPECT_EQ(r["data"]["dataset"], "fashion-mnist");
    EXPECT_EQ(r["data"]["path"], engine::kDefaultFashionMnistDir);
    EXPECT_EQ(r["data"]["train_images"], "train-images-idx3-ubyte");
    EXPECT_EQ(r["data"]["shuffle"], true);
    EXPECT_EQ(r["data"]["drop_remainder"], false);
    EXPECT_EQ(r["model"], nlohmann::json({{"preset", "mlp"}}));
    EXPECT_EQ(r["optimizer"]["type"], "adam");
    EXPECT_EQ(r["optimizer"]["learning_rate"], 0.001);  // the decimal, not float noise
    EXPECT_EQ(r["optimizer"]["epsilon"], 1e-7);
    EXPECT_EQ(r["train"]["batch_size"], 128);
    EXPECT_EQ(r["train"]["epochs"], 1);
    EXPECT_EQ(r["train"]["eval_at_epoch_end"], true);
    EXPECT_EQ(r["train"]["threads"], 0);
    EXPECT_EQ(r["strategy"]["type"], "single");
    EXPECT_EQ(r["strategy"]["replicas"], 1);
    EXPECT_EQ(r["device"]["memory_mb"], 0);  // 0: the host's RAM
    EXPECT_EQ(r.size(), 9u) << r.dump(2);
    // 14 values (train_files and test_files have no default) and the csv, pipeline, storage and shape
    // sections.
    EXPECT_EQ(r["data"].size(), 18u) << r["data"].dump(2);
    EXPECT_EQ(r["data"]["pipeline"]["prefetch"], 2);
    EXPECT_EQ(r["data"]["storage"], nlohmann::json({{"preset", "local"}})) << "numbers come from the preset";
    EXPECT_EQ(r["optimizer"].size(), 9u);
    EXPECT_EQ(r["train"].size(), 11u) << "checkpoint_path has no default";
    EXPECT_EQ(r["train"]["warm_start"], nlohmann::json({{"optimizer", "fresh"}})) << "no source: from scratch";
}

TEST(ExperimentFiles, ResolvedLayersHaveAllTheirKeys) {
    const Experiment e = parseExperiment(R"({"model": {"layers": [
        {"type": "conv2d", "filters": 4}, {"type": "maxpool2d", "size": 3}, {"type": "flatten"},
        {"type": "dropout", "rate": 0.5}, {"type": "dense", "units": 10, "bias": false}]}})", "t.json");
    const auto& layers = e.resolved["model"]["layers"];
    EXPECT_EQ(layers[0], nlohmann::json({{"type", "conv2d"}, {"filters", 4}, {"kernel", 3}, {"stride", 1},
                                         {"padding", 0}, {"bias", true}}));
    EXPECT_EQ(layers[1], nlohmann::json({{"type", "maxpool2d"}, {"size", 3}, {"stride", 3}, {"padding", 0}}));
    EXPECT_EQ(layers[2], nlohmann::json({{"type", "flatten"}}));
    EXPECT_EQ(e.model.preset, "");
    EXPECT_EQ(e.model.layers[1].kind, LayerKind::MaxPool2D);
    EXPECT_EQ(e.model.layers[1].kernel, 3);
    EXPECT_EQ(e.model.layers[1].stride, 3);
    EXPECT_FLOAT_EQ(e.model.layers[3].rate, 0.5f);
    EXPECT_FALSE(e.model.layers[4].bias);
}

TEST(ExperimentFiles, ResolvedParsesBackToTheSameExperiment) {
    for (const char* name : {"fmnist-mlp.json", "fmnist-cnn.json", "fmnist-logreg.json", "fmnist-pretrain.json",
                             "fmnist-warm-start.json"}) {
        const Experiment first = loadExperimentFile(shipped(name), {"model.preset=cnn", "train.max_steps=10"});
        const Experiment again = parseExperiment(first.resolved.dump(), "elsewhere/other.json");
        EXPECT_EQ(again.resolved, first.resolved) << name;
    }
}

TEST(ExperimentFiles, RelativeDataPathResolvesAgainstTheFilesFolder) {
    TempDir dir;
    const fs::path file = dir.write("sub/exp.json", R"({"data": {"path": "../data/fm"}, "model": {"preset": "logreg"}})");
    const Experiment e = loadExperimentFile(file.string());
    EXPECT_EQ(e.data.path, (dir.path() / "data" / "fm").lexically_normal().string());
    EXPECT_EQ(e.resolved["data"]["path"], e.data.path);
    EXPECT_EQ(e.source_path, file.lexically_normal().string());
    EXPECT_EQ(e.name, "exp");
}

TEST(ExperimentFiles, AbsoluteDataPathIsKept) {
    const Experiment e = parseExperiment(R"({"data": {"path": "/data/x"}, "model": {"preset": "mlp"}})", "a/b.json");
    EXPECT_EQ(e.data.path, "/data/x");
}

TEST(ExperimentFiles, UnreadableFileNamesThePathAndTheOsError) {
    const std::string missing = "/nonexistent/trainbench/none.json";
    try {
        loadExperimentFile(missing);
        FAIL() << "expected an ExperimentError";
    } catch (const ExperimentError& e) {
        EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
    }
    TempDir dir;
    EXPECT_THROW(loadExperimentFile(dir.path().string()), ExperimentError);
}

TEST(ExperimentFiles, SyntaxErrorInAFileNamesTheFileAsGiven) {
    TempDir dir;
    const fs::path file = dir.write("bad.json", "{\n  \"model\": {\"preset\": \"mlp\"}\n  \"train\": {}\n}\n");
    try {
        loadExperimentFile(file.string());
        FAIL() << "expected an ExperimentError";
    } catch (const ExperimentError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(file.string() + ":3:3: syntax error", 0), 0u) << e.what();
    }
}

}  // namespace
}  // namespace trainbench::app
