// The bar for post-training int8: W1 (mlp) and W2 (cnn), trained briefly on Fashion-MNIST,
// calibrated on 4 x 64 training examples, keep their top-1 accuracy on the FULL test set (10 000)
// within 0.5 points of fp32's, with weights >= 3.5x smaller.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "app/inference/calibrationset.h"
#include "app/inference/modelsource.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/calibration.h"
#include "engine/inference/compiledgraph.h"
#include "engine/inference/int8compiledgraph.h"
#include "tests/app/trainedrun.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;
using namespace engine::inference;

// Top-1 accuracy of an executor on the test set, given as stored pixels.
template <typename Executor>
double accuracy(Executor& e, const engine::EvalSet& test, const std::vector<float>& pixels) {
    const int64_t classes = e.classes();
    std::vector<float> logits(static_cast<size_t>(256 * classes));
    int64_t correct = 0;
    for (int64_t first = 0; first < test.count; first += 256) {
        const int64_t n = std::min<int64_t>(256, test.count - first);
        e.run(pixels.data() + first * test.exampleSize(), n, logits.data());
        for (int64_t i = 0; i < n; ++i) {
            const float* row = logits.data() + i * classes;
            correct += (std::max_element(row, row + classes) - row) == test.labels[static_cast<size_t>(first + i)];
        }
    }
    return double(correct) / double(test.count);
}

TEST(QuantizeAccuracy, Int8KeepsTop1WithinHalfAPointOnTheFullTestSet) {
    const fs::path dir = fs::temp_directory_path() / ("trainbench-quantize-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string db = (dir / "runs.db").string();
    for (const std::string preset : {"mlp", "cnn"}) {
        const profiler::RunId id = testing::trainBriefly(dir, db, preset);
        const ModelSource m = openModel(std::to_string(id.value), db);
        ASSERT_EQ(m.run->data.test.count, 10000);
        // The test set holds pixels / 255; the graph takes them as stored (k / 255 * 255 rounds to k).
        std::vector<float> pixels(m.run->data.test.x.size());
        for (size_t i = 0; i < pixels.size(); ++i)
            pixels[i] = std::nearbyint(m.run->data.test.x[i] / m.graph.metadata.input_scale);
        CalibrationOptions options;
        options.batches = 4;
        options.batch_size = 64;
        options.seed = 11;
        const std::vector<float> calibration = calibrationExamples(m, 256, options.seed);
        const QuantizedGraph q = quantizeGraph(m.graph, calibration.data(), 256, options);
        engine::CpuDevice device(1);
        const engine::graph::Graph fp32 = engine::graph::optimizeForInference(m.graph);
        CompiledGraph reference(fp32, device);
        Int8CompiledGraph int8(q, device);
        const double a32 = accuracy(reference, m.run->data.test, pixels), a8 = accuracy(int8, m.run->data.test, pixels);
        std::printf("%s: top-1 fp32 %.2f %%, int8 %.2f %% (ISA %s, u8 levels %d); weights %lld -> %lld bytes\n",
                    preset.c_str(), 100 * a32, 100 * a8, effectiveIsa().c_str(), q.calibration.u8_levels,
                    static_cast<long long>(fp32WeightBytes(fp32)), static_cast<long long>(q.weightBytes()));
        EXPECT_LE(std::abs(a32 - a8), 0.005) << preset;
        EXPECT_GE(double(fp32WeightBytes(fp32)) / double(q.weightBytes()), 3.5) << preset;
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace trainbench::app
