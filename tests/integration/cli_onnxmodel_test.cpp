// End to end: an experiment whose model is an ONNX file ("model": {"onnx": ...}). ResNet-50 written
// as ONNX (the preset's graph, engine/graph/graphfrommodel.h) is estimated exactly as the resnet50
// preset is — the same forward and backward time on every slice of the shape-only ImageNet
// experiment, and the same inference latency and cost on every catalog device — so an imported model
// is timed from its graph as the engine would run it. A model whose examples are not the data's is
// refused naming both shapes, by `run` too; `run` trains an imported model from its own weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/device/cpudevice.h"
#include "engine/graph/graphfrommodel.h"
#include "engine/model/layerstack.h"
#include "engine/model/model.h"
#include "engine/onnx/onnxexport.h"
#include "engine/onnx/onnximport.h"
#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

const std::string kImageNet = std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/resnet50-imagenet-estimate.json";

// The preset `name` for `sample` and `classes` as an ONNX file (zero weights: only the graph counts).
// With a seed, the weights are a model's seeded initialisation instead.
std::string writePresetOnnx(const std::string& name, const trainbench::engine::Dims& sample, int64_t classes,
                            const std::filesystem::path& dir, uint64_t seed = 0) {
    namespace engine = trainbench::engine;
    engine::ModelSpec spec;
    spec.preset = name;
    spec.layers = engine::presetLayers(name);
    engine::CpuDevice dev(1);
    const engine::LayerStack stack = engine::buildLayerStack(spec, sample, classes, dev);
    std::vector<float> params(static_cast<size_t>(stack.paramCount), 0.0f);
    std::vector<float> state(static_cast<size_t>(stack.stateCount), 1.0f);
    if (seed != 0) {
        const engine::Model model(spec, sample, classes, dev, seed);
        params.assign(model.params(), model.params() + model.paramCount());
        state.assign(model.state().begin(), model.state().end());
    }
    const std::string path = (dir / (name + ".onnx")).string();
    engine::onnx::writeOnnx(engine::graph::graphFromModel(spec, sample, classes, params, state), path, {name});
    return path;
}

nlohmann::json estimateJson(const std::vector<std::string>& extra, const std::filesystem::path& dir) {
    std::vector<std::string> args{"estimate", kImageNet, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = runCli(args, dir);
    EXPECT_EQ(r.exitCode, 0) << r.err << r.out;
    return r.exitCode == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::array();
}

}  // namespace

TEST(CliOnnxModel, AnImportedResNet50IsEstimatedLikeThePresetOnEverySliceAndDevice) {
    TempDir tmp;
    const std::string onnx = writePresetOnnx("resnet50", {3, 224, 224}, 1000, tmp.path);
    const nlohmann::json preset = estimateJson({}, tmp.path);
    const nlohmann::json imported = estimateJson({"--set", "model.onnx=" + onnx}, tmp.path);
    ASSERT_EQ(imported.size(), 5u) << "v3-8 ... v3-2048";
    ASSERT_EQ(imported.size(), preset.size());
    for (size_t i = 0; i < preset.size(); ++i) {
        const auto &a = imported[i], &b = preset[i];
        EXPECT_EQ(a["devices"], b["devices"]);
        EXPECT_DOUBLE_EQ(a["forward_seconds"].get<double>(), b["forward_seconds"].get<double>()) << b["devices"];
        EXPECT_DOUBLE_EQ(a["backward_seconds"].get<double>(), b["backward_seconds"].get<double>()) << b["devices"];
        EXPECT_DOUBLE_EQ(a["memory_bytes"].get<double>(), b["memory_bytes"].get<double>()) << b["devices"];
        // The updates are per node (a bottleneck is seven), per layer in the preset: the same work,
        // a few more per-op overheads.
        EXPECT_NEAR(a["step_seconds"].get<double>(), b["step_seconds"].get<double>(), 0.05 * b["step_seconds"].get<double>())
            << b["devices"];
    }

    const auto infer = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args{"--inference", "--batch", "1,64", "--precision", "fp32,int8"};
        args.insert(args.end(), extra.begin(), extra.end());
        return estimateJson(args, tmp.path);
    };
    const nlohmann::json presetRows = infer({}), importedRows = infer({"--set", "model.onnx=" + onnx});
    ASSERT_EQ(importedRows.size(), presetRows.size());
    ASSERT_GT(presetRows.size(), 20u);
    int compared = 0;
    for (size_t i = 0; i < presetRows.size(); ++i) {
        const auto &a = importedRows[i], &b = presetRows[i];
        const std::string what = b["device"].get<std::string>() + " " + b["precision"].get<std::string>() + " batch " +
                                 std::to_string(b["batch"].get<int>());
        EXPECT_EQ(a["device"], b["device"]);
        EXPECT_DOUBLE_EQ(a["weight_bytes"].get<double>(), b["weight_bytes"].get<double>()) << what;
        if (a["fits"] != b["fits"]) {
            // The graph bounds inference activations by every value a node writes (a bottleneck's
            // inner ones too, as CompiledGraph holds them), the layer stack by each layer's output:
            // only memory may tell them apart, never the time.
            EXPECT_TRUE(b["fits"].get<bool>()) << what;
            EXPECT_NE(a["why_not"].get<std::string>().find("needs "), std::string::npos) << what << ": " << a["why_not"];
            continue;
        }
        if (!b["fits"].get<bool>()) continue;
        ++compared;
        EXPECT_DOUBLE_EQ(a["latency_seconds"].get<double>(), b["latency_seconds"].get<double>()) << what;
        EXPECT_DOUBLE_EQ(a["usd_per_million"].get<double>(), b["usd_per_million"].get<double>()) << what;
    }
    EXPECT_GT(compared, 15);
}

TEST(CliOnnxModel, AModelForOtherExamplesIsRefusedNamingBothShapesByEstimateAndRun) {
    TempDir tmp;
    const std::string fixture = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/mobilenet_block.onnx";
    const auto mismatch = runCli({"estimate", kImageNet, "--set", "model.onnx=" + fixture}, tmp.path);
    EXPECT_NE(mismatch.exitCode, 0);
    EXPECT_NE(mismatch.err.find("the model takes examples of 3x16x16 and outputs 10 classes; the data has "
                                "3x224x224 and 1000"),
              std::string::npos)
        << mismatch.err << mismatch.out;

    // The same block on data of its own shape is estimated; a file that is not there is named.
    const auto fits = runCli({"estimate", kImageNet, "--set", "model.onnx=" + fixture, "--set", "data.shape.height=16",
                              "--set", "data.shape.width=16", "--set", "data.shape.classes=10"},
                             tmp.path);
    EXPECT_EQ(fits.exitCode, 0) << fits.err << fits.out;
    const auto missing = runCli({"estimate", kImageNet, "--set", "model.onnx=nosuch.onnx"}, tmp.path);
    EXPECT_NE(missing.exitCode, 0);
    EXPECT_NE(missing.err.find("model.onnx"), std::string::npos) << missing.err;
    EXPECT_NE(missing.err.find("nosuch.onnx"), std::string::npos) << missing.err;

    // `run` checks the same before it trains.
    const auto run = runCli({"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json", "--set",
                             "model.onnx=" + fixture, "--db", (tmp.path / "runs.db").string()},
                            tmp.path);
    EXPECT_NE(run.exitCode, 0);
    EXPECT_NE((run.err + run.out).find("the model takes examples of 3x16x16 and outputs 10 classes; the data has 1x28x28 and 10"),
              std::string::npos)
        << run.err << run.out;
}

// W1 written as ONNX with the weights the preset starts from (the experiment's seed, 42) trains with
// `run` exactly as the preset does — the same layers from the same weights on the same batches give
// the same test accuracy to the last example — is recorded as onnx(mlp.onnx), and its checkpoint
// exports as any run's does; a model with nodes the engine cannot train is refused naming them.
TEST(CliOnnxModel, RunTrainsAnImportedModelAsThePresetAndItsCheckpointExports) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string w1 = writePresetOnnx("mlp", {1, 28, 28}, 10, tmp.path, 42);
    const std::vector<std::string> common{"--set", "data.fraction=0.05", "--set", "train.epochs=2", "--set",
                                          "train.threads=1", "--db", db, "-q"};
    std::vector<std::string> preset{"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json"};
    preset.insert(preset.end(), common.begin(), common.end());
    std::vector<std::string> imported = preset;
    imported.insert(imported.end(), {"--set", "model.onnx=" + w1, "--set", "train.checkpoint_at_end=true"});
    const auto asPreset = runCli(preset, tmp.path);
    ASSERT_EQ(asPreset.exitCode, 0) << asPreset.err << asPreset.out;
    const auto run = runCli(imported, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    // Other starting weights (seed 11's) in the file, the same run otherwise: they are what it starts from.
    const std::string other = (tmp.path / "other").string();
    std::filesystem::create_directories(other);
    std::vector<std::string> otherStart = preset;
    otherStart.insert(otherStart.end(), {"--set", "model.onnx=" + writePresetOnnx("mlp", {1, 28, 28}, 10, other, 11)});
    const auto third = runCli(otherStart, tmp.path);
    ASSERT_EQ(third.exitCode, 0) << third.err << third.out;
    {
        auto store = trainbench::profiler::RunStore::open(db, trainbench::profiler::OpenMode::ReadOnly);
        auto rows = store.listRuns();
        ASSERT_EQ(rows.size(), 3u);
        std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.id.value < b.id.value; });
        EXPECT_EQ(rows[0].model.value_or(""), "mlp");
        EXPECT_EQ(rows[1].model.value_or(""), "onnx(mlp.onnx)");
        // 784-512-256-10: well past chance on a twentieth of the data, and the same to the example.
        EXPECT_GT(rows[1].final_accuracy.value_or(0.0), 0.6);
        EXPECT_EQ(rows[1].final_accuracy.value_or(-1.0), rows[0].final_accuracy.value_or(-2.0));
        EXPECT_EQ(rows[1].final_loss.value_or(-1.0), rows[0].final_loss.value_or(-2.0));
        EXPECT_NE(rows[2].final_loss.value_or(-1.0), rows[0].final_loss.value_or(-1.0));
    }
    const std::string exported = (tmp.path / "trained.onnx").string();
    const auto exp = runCli({"export-model", "2", "-o", exported, "--db", db}, tmp.path);
    EXPECT_EQ(exp.exitCode, 0) << exp.err << exp.out;
    EXPECT_TRUE(std::filesystem::exists(exported));

    // The same model with its ReLUs as ReLU6 (Clip): no backward in the engine, each node named.
    namespace engine = trainbench::engine;
    engine::graph::Graph clipped = engine::onnx::readOnnx(w1);
    std::string first;
    for (engine::graph::Node& n : clipped.nodes)
        if (n.kind == engine::graph::OpKind::Relu && first.empty()) {
            n.kind = engine::graph::OpKind::Clip;
            n.clip_min = 0.0f;
            n.clip_max = 6.0f;
            first = n.name;
        }
    ASSERT_FALSE(first.empty());
    const std::string relu6 = (tmp.path / "relu6.onnx").string();
    engine::onnx::writeOnnx(clipped, relu6, {"relu6"});
    const auto refused = runCli({"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json", "--set",
                                 "model.onnx=" + relu6, "--db", db, "-q"},
                                tmp.path);
    EXPECT_NE(refused.exitCode, 0);
    EXPECT_NE((refused.err + refused.out).find("cannot train it: 1 node has no backward in the engine: '" + first + "' (Clip)"),
              std::string::npos)
        << refused.err << refused.out;
}

// torchvision's ResNet-50 and MobileNetV2 as PyTorch exports them, stripped to shapes
// (tests/fixtures/onnx/full/make.py: a few tens of KB instead of 100 MB): ResNet-50 is estimated on
// every TPU v3 slice with the resnet50 preset's forward and backward time (the same ops: torchvision
// builds the model the preset describes); MobileNetV2, which no preset describes, gets a step time,
// memory and cost on every slice, and an inference estimate on every device.
TEST(CliOnnxModel, TorchvisionModelsStrippedToShapesEstimateOnEverySlice) {
    TempDir tmp;
    const std::string full = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/full/";
    const nlohmann::json preset = estimateJson({}, tmp.path);
    const nlohmann::json resnet = estimateJson({"--set", "model.onnx=" + full + "resnet50.onnx"}, tmp.path);
    ASSERT_EQ(resnet.size(), preset.size());
    for (size_t i = 0; i < preset.size(); ++i) {
        EXPECT_DOUBLE_EQ(resnet[i]["forward_seconds"].get<double>(), preset[i]["forward_seconds"].get<double>())
            << preset[i]["devices"];
        EXPECT_DOUBLE_EQ(resnet[i]["backward_seconds"].get<double>(), preset[i]["backward_seconds"].get<double>())
            << preset[i]["devices"];
    }
    const nlohmann::json mobilenet = estimateJson({"--set", "model.onnx=" + full + "mobilenet_v2.onnx"}, tmp.path);
    ASSERT_EQ(mobilenet.size(), 5u);
    for (size_t i = 0; i < mobilenet.size(); ++i) {
        EXPECT_TRUE(mobilenet[i]["fits"].get<bool>()) << mobilenet[i]["devices"];
        // MobileNetV2 does about 0.3 GFLOPs per image to ResNet-50's 4.1: far less work per step.
        EXPECT_LT(mobilenet[i]["forward_seconds"].get<double>(), resnet[i]["forward_seconds"].get<double>());
        EXPECT_GT(mobilenet[i]["cost"].get<double>(), 0.0);
    }
    const nlohmann::json rows =
        estimateJson({"--set", "model.onnx=" + full + "mobilenet_v2.onnx", "--inference", "--batch", "1"}, tmp.path);
    ASSERT_GT(rows.size(), 10u);
    for (const auto& r : rows)
        if (r["precision"] == "fp32" && r["device"] == "a100-sxm4-40gb") {
            EXPECT_TRUE(r["fits"].get<bool>());
            // 3.5 M parameters in float32.
            EXPECT_NEAR(r["weight_bytes"].get<double>(), 3504872 * 4.0, 1e5);
        }
}

// BERT-base as tests/fixtures/onnx/encoder.py builds it, stripped to shapes (full/make.py: 124 KB
// for 110 M parameters): experiments/bert-base-estimate.json estimates its fine-tuning on every TPU
// v3 slice from v3-8 to v3-2048, and bert-base-a100-estimate.json on 1 to 8 A100s: step time,
// memory (weights, gradients and Adam's two moments of 110 M parameters) and cost; serving it gets a
// latency on every device.
TEST(CliOnnxModel, BertBaseStrippedToShapesEstimatesOnEverySliceAndOnA100s) {
    TempDir tmp;
    const auto estimate = [&](const std::string& file, std::vector<std::string> extra) {
        std::vector<std::string> args{"estimate", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/" + file, "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = runCli(args, tmp.path);
        EXPECT_EQ(r.exitCode, 0) << r.err << r.out;
        return r.exitCode == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::array();
    };
    const nlohmann::json slices = estimate("bert-base-estimate.json", {});
    ASSERT_EQ(slices.size(), 5u) << "v3-8 ... v3-2048";
    const double stateBytes = 109187330 * 4.0 * 4;  // weights, gradients, Adam's m and v
    for (size_t i = 0; i < slices.size(); ++i) {
        const auto& e = slices[i];
        EXPECT_TRUE(e["fits"].get<bool>()) << e["devices"];
        EXPECT_GT(e["memory_bytes"].get<double>(), stateBytes) << e["devices"];
        EXPECT_GT(e["cost"].get<double>(), 0.0) << e["devices"];
        EXPECT_GT(e["comm_seconds"].get<double>(), 0.0) << e["devices"] << ": 440 MB of gradients to all-reduce";
        // 32 sequences per core on every slice: the forward pass takes the same time on each.
        EXPECT_DOUBLE_EQ(e["forward_seconds"].get<double>(), slices[0]["forward_seconds"].get<double>()) << e["devices"];
        if (i > 0) {
            EXPECT_GT(e["samples_per_second"].get<double>(), slices[i - 1]["samples_per_second"].get<double>()) << e["devices"];
        }
    }
    // About 6 x 110 M x 128 FLOPs per sequence (forward and backward) at 32 sequences: a v3 core's
    // step is tens of milliseconds, not microseconds or seconds.
    EXPECT_GT(slices[0]["step_seconds"].get<double>(), 0.01);
    EXPECT_LT(slices[0]["step_seconds"].get<double>(), 1.0);

    const nlohmann::json gpus = estimate("bert-base-a100-estimate.json", {});
    ASSERT_EQ(gpus.size(), 4u) << "1, 2, 4, 8 A100s";
    EXPECT_EQ(gpus[0]["comm_seconds"].get<double>(), 0.0) << "one GPU exchanges nothing";
    for (size_t i = 1; i < gpus.size(); ++i) {
        EXPECT_GT(gpus[i]["comm_seconds"].get<double>(), 0.0) << gpus[i]["devices"];
        EXPECT_GT(gpus[i]["samples_per_second"].get<double>(), gpus[i - 1]["samples_per_second"].get<double>()) << gpus[i]["devices"];
    }
    const nlohmann::json serving = estimate("bert-base-estimate.json", {"--inference", "--batch", "1"});
    ASSERT_GT(serving.size(), 5u);
    for (const auto& r : serving)
        if (r["precision"] == "fp32" && r["device"] == "a100-sxm4-40gb") {
            EXPECT_TRUE(r["fits"].get<bool>());
            EXPECT_NEAR(r["weight_bytes"].get<double>(), 109187330 * 4.0, 1e6);
        }
}

// `predict` with the imported encoder over a CSV of token ids (one row of 8 ids and a label per
// example): the probabilities are the softmax of PyTorch's logits for the same ids; a row of 7 ids
// is refused naming both shapes.
TEST(CliOnnxModel, PredictRunsAnImportedEncoderOverCsvTokenIds) {
    TempDir tmp;
    const std::string dir = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/";
    const std::vector<float> ids = trainbench::testing::readFloats(dir + "encoder.input.bin");
    const std::vector<float> logits = trainbench::testing::readFloats(dir + "encoder.output.bin");
    ASSERT_EQ(ids.size(), 32u);
    const auto writeCsv = [&](const std::string& name, int perRow) {
        std::ofstream out(tmp.path / name);
        for (int e = 0; e < 4; ++e) {
            for (int t = 0; t < perRow; ++t) out << static_cast<int>(ids[size_t(e * 8 + t)]) << ",";
            out << e % 3 << "\n";
        }
    };
    writeCsv("ids.csv", 8);
    const std::string db = (tmp.path / "runs.db").string();
    const auto r = runCli({"predict", dir + "encoder.onnx", "-o", (tmp.path / "p.csv").string(), "--db", db, "--set",
                           "data.dataset=csv", "--set", "data.test_files=" + (tmp.path / "ids.csv").string(), "--set",
                           "data.train_files=" + (tmp.path / "ids.csv").string()},
                          tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    std::ifstream csv(tmp.path / "p.csv");
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line, "index,prediction,score,label,p_0,p_1,p_2");
    for (size_t e = 0; e < 4; ++e) {
        ASSERT_TRUE(std::getline(csv, line)) << "example " << e;
        std::vector<double> cells;
        std::stringstream row(line);
        for (std::string cell; std::getline(row, cell, ',');) cells.push_back(std::stod(cell));
        ASSERT_EQ(cells.size(), 7u) << line;
        double top = -1e30, sum = 0;
        for (size_t k = 0; k < 3; ++k) top = std::max(top, double(logits[e * 3 + k]));
        for (size_t k = 0; k < 3; ++k) sum += std::exp(double(logits[e * 3 + k]) - top);
        for (size_t k = 0; k < 3; ++k)
            EXPECT_NEAR(cells[4 + k], std::exp(double(logits[e * 3 + k]) - top) / sum, 1e-5) << "example " << e << " class " << k;
        EXPECT_EQ(cells[3], double(e % 3)) << "the label column";
    }
    writeCsv("short.csv", 7);
    const auto wrong = runCli({"predict", dir + "encoder.onnx", "-o", (tmp.path / "q.csv").string(), "--db", db, "--set",
                               "data.dataset=csv", "--set", "data.test_files=" + (tmp.path / "short.csv").string(), "--set",
                               "data.train_files=" + (tmp.path / "short.csv").string()},
                              tmp.path);
    EXPECT_NE(wrong.exitCode, 0);
    EXPECT_NE(wrong.err.find(": examples are 1x1x7, ONNX file " + dir + "encoder.onnx"), std::string::npos) << wrong.err;
    EXPECT_NE(wrong.err.find(" takes 8"), std::string::npos) << wrong.err;
}

// A model stripped to shapes cannot be served or run: the error says why.
TEST(CliOnnxModel, AModelStrippedToShapesIsRefusedWhereItWouldRun) {
    TempDir tmp;
    const std::string resnet = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/full/resnet50.onnx";
    const auto serve = runCli({"serve", resnet, "--db", (tmp.path / "runs.db").string()}, tmp.path);
    EXPECT_NE(serve.exitCode, 0);
    EXPECT_NE(serve.err.find("no data (a model stripped to shapes: only estimate takes it)"), std::string::npos)
        << serve.err;
}
