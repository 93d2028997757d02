#include "bench/importedmodelbench.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "app/quote/quote.h"
#include "bench/benchutil.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphfrommodel.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "engine/onnx/onnximport.h"
#include "engine/onnx/onnxtrainable.h"
#include "engine/optim/optimizer.h"
#include "engine/util/rng.h"
#include "profiler/store/runstore.h"

namespace trainbench::bench {

namespace {

const engine::Dims kSample{1, 28, 28};
constexpr int64_t kClasses = 10;
constexpr int64_t kTrainBatch = 128;
constexpr int64_t kInferBatch = 256;

std::vector<float> randomImages(int64_t n, uint64_t seed) {
    engine::Rng rng(seed);
    std::vector<float> x(static_cast<size_t>(n * 784));
    for (float& v : x) v = rng.uniform();
    return x;
}

// Seconds per training step: the median of `steps` steps after 5 of warm-up.
double trainStepSeconds(const engine::ModelSpec& spec, int threads, int steps) {
    engine::CpuDevice device(threads);
    engine::Model model(spec, kSample, kClasses, device, 42);
    engine::OptimizerConfig adam;  // Adam, lr 1e-3: the workloads' optimizer
    std::unique_ptr<engine::Optimizer> opt = engine::Optimizer::create(adam, model.paramCount());
    const std::vector<float> images = randomImages(kTrainBatch, 7);
    std::vector<int32_t> labels(kTrainBatch);
    for (int64_t i = 0; i < kTrainBatch; ++i) labels[static_cast<size_t>(i)] = static_cast<int32_t>(i % kClasses);
    engine::Tensor grad(engine::Tensor::plainDesc({kTrainBatch, kClasses}), device.engine());
    std::vector<double> times;
    std::vector<float> x;
    for (int s = 0; s < steps + 5; ++s) {
        x = images;
        const auto t0 = Clock::now();
        engine::Tensor& logits = model.forward(x.data(), kTrainBatch, true, static_cast<uint64_t>(s));
        engine::SoftmaxCrossEntropy::compute(logits, labels.data(), &grad);
        model.backward(grad);
        opt->step(model.params(), model.grads(), model.paramCount(), s + 1);
        if (s >= 5) times.push_back(secondsSince(t0));
    }
    return median(times);
}

struct InferenceFigures {
    double examplesPerSecond = 0.0;  // batch 256, best of 3 passes over 10 batches
    double p50 = 0.0;                // batch-1 latency, seconds
};

InferenceFigures inferenceFigures(const engine::graph::Graph& graph, int threads, int queries) {
    engine::CpuDevice device(threads);
    engine::inference::CompiledGraph compiled(engine::graph::optimizeForInference(graph), device);
    const std::vector<float> images = randomImages(kInferBatch, 9);
    std::vector<float> out(static_cast<size_t>(kInferBatch * kClasses));
    InferenceFigures f;
    compiled.run(images.data(), kInferBatch, out.data());
    for (int pass = 0; pass < 3; ++pass) {
        const auto t0 = Clock::now();
        for (int b = 0; b < 10; ++b) compiled.run(images.data(), kInferBatch, out.data());
        f.examplesPerSecond = std::max(f.examplesPerSecond, 10.0 * kInferBatch / secondsSince(t0));
    }
    std::vector<double> latency;
    for (int q = 0; q < queries + 50; ++q) {
        const auto t0 = Clock::now();
        compiled.run(images.data() + (q % kInferBatch) * 784, 1, out.data());
        if (q >= 50) latency.push_back(secondsSince(t0));
    }
    f.p50 = median(latency);
    return f;
}

std::string ensureOnnx(const ImportedModelBenchOptions& o, const std::string& workload) {
    const std::filesystem::path dir = o.onnxDir.empty() ? std::filesystem::temp_directory_path() / "trainbench-bench-onnx"
                                                        : std::filesystem::path(o.onnxDir);
    const std::filesystem::path file = dir / (workload + ".onnx");
    if (std::filesystem::exists(file)) return file.string();
    const std::string script = std::string(TRAINBENCH_SOURCE_DIR) + "/bench/export_workloads_onnx.py";
    const std::string cmd = app::shellWord(o.python, "--python") + " " + app::shellWord(script, "the script") + " " +
                            app::shellWord(dir.string(), "--onnx-dir") + " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0 || !std::filesystem::exists(file))
        throw std::runtime_error("could not write " + file.string() + " with " + script + " (needs " + o.python +
                                 " with torch)");
    return file.string();
}

// W1 / W2 trained by the CLI from the preset and from the PyTorch export, seed by seed.
int accuracyBench(const ImportedModelBenchOptions& o) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "trainbench-bench-imported-accuracy";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string db = (dir / "runs.db").string();
    std::printf("imported-model --accuracy: final test accuracy, CLI runs of the workloads' experiments, %d seeds\n", o.seeds);
    std::printf("%-4s %6s %5s %10s %10s\n", "", "epochs", "seed", "preset", "imported");
    for (const std::string& w : o.workloads) {
        const std::string experiment =
            std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/" + (w == "w1" ? "fmnist-mlp.json" : "fmnist-cnn.json");
        const int epochs = w == "w1" ? o.epochsW1 : o.epochsW2;
        const std::string onnx = ensureOnnx(o, w);
        std::vector<double> preset, imported;
        for (int seed = 1; seed <= o.seeds; ++seed) {
            for (const bool fromOnnx : {false, true}) {
                std::string cmd = app::shellWord(o.cli, "--cli") + " run " + app::shellWord(experiment, "experiment") +
                                  " --db " + app::shellWord(db, "db") + " -q --set seed=" + std::to_string(seed) +
                                  " --set train.epochs=" + std::to_string(epochs);
                if (fromOnnx) cmd += " --set " + app::shellWord("model.onnx=" + onnx, "model");
                cmd += " > /dev/null 2>&1";
                if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
                profiler::RunStore store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
                std::vector<profiler::RunRow> runs = store.listRuns();
                const auto newest = std::max_element(runs.begin(), runs.end(),
                                                     [](const auto& a, const auto& b) { return a.id.value < b.id.value; });
                (fromOnnx ? imported : preset).push_back(newest->final_accuracy.value_or(0.0) * 100.0);
            }
            std::printf("%-4s %6d %5d %9.2f%% %9.2f%%\n", w.c_str(), epochs, seed, preset.back(), imported.back());
        }
        double p = 0, i = 0;
        for (double v : preset) p += v / static_cast<double>(preset.size());
        for (double v : imported) i += v / static_cast<double>(imported.size());
        std::printf("%-4s %6d %5s %9.2f%% %9.2f%%  difference %+.2f points (goal: within 0.5)\n", w.c_str(), epochs, "mean",
                    p, i, i - p);
    }
    return 0;
}

}  // namespace

int importedModelBench(const ImportedModelBenchOptions& o) {
    try {
        if (o.accuracy) return accuracyBench(o);
        std::printf("imported-model: W1/W2 exported by PyTorch to ONNX and imported, vs the engine's presets; %d threads, "
                    "%d alternating rounds, medians\n",
                    o.threads, o.rounds);
        std::printf("%-4s %-26s %14s %14s %8s\n", "", "measure", "preset", "imported", "ratio");
        for (const std::string& w : o.workloads) {
            const std::string preset = w == "w1" ? "mlp" : "cnn";
            const std::string file = ensureOnnx(o, w);
            engine::ModelSpec presetSpec;
            presetSpec.preset = preset;
            presetSpec.layers = engine::presetLayers(preset);
            engine::ModelSpec importedSpec;
            importedSpec.onnx = file;
            importedSpec = engine::onnx::trainableModel(importedSpec, kSample, kClasses);
            // The preset's graph with its own seeded weights; the import's as PyTorch wrote it.
            engine::CpuDevice one(1);
            const engine::Model seeded(presetSpec, kSample, kClasses, one, 42);
            const engine::graph::Graph presetGraph = engine::graph::graphFromModel(
                presetSpec, kSample, kClasses, {seeded.params(), static_cast<size_t>(seeded.paramCount())}, seeded.state());
            const engine::graph::Graph importedGraph = engine::onnx::readOnnx(file);

            std::vector<double> trainP, trainI, thrP, thrI, latP, latI;
            for (int r = 0; r < o.rounds; ++r) {
                // Alternate which side goes first, so drift over a round does not favour one.
                for (int side = 0; side < 2; ++side) {
                    const bool imported = (side + r) % 2 == 1;
                    const double step = trainStepSeconds(imported ? importedSpec : presetSpec, o.threads, o.trainSteps);
                    const InferenceFigures f = inferenceFigures(imported ? importedGraph : presetGraph, o.threads, o.queries);
                    (imported ? trainI : trainP).push_back(kTrainBatch / step);
                    (imported ? thrI : thrP).push_back(f.examplesPerSecond);
                    (imported ? latI : latP).push_back(f.p50 * 1e6);
                }
            }
            const auto row = [&](const char* what, double p, double i, bool higherIsBetter) {
                std::printf("%-4s %-26s %14.1f %14.1f %7.3fx\n", w.c_str(), what, p, i, higherIsBetter ? i / p : p / i);
            };
            row("train examples/s (b128)", median(trainP), median(trainI), true);
            row("infer examples/s (b256)", median(thrP), median(thrI), true);
            row("infer p50 us (b1)", median(latP), median(latI), false);
        }
        std::printf("ratio: imported's speed / preset's (for latency, preset's / imported's); goal >= 0.95x\n");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "imported-model: %s\n", e.what());
        return 1;
    }
}

}  // namespace trainbench::bench
