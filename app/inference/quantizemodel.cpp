#include "app/inference/quantizemodel.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "app/inference/calibrationset.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/inference/int8compiledgraph.h"

namespace trainbench::app {

namespace {

using namespace engine::inference;

// Top-1 accuracy of an executor on the test set, in batches of 256.
template <typename Executor>
double accuracy(Executor& e, const engine::EvalSet& test) {
    constexpr int64_t kBatch = 256;
    const int64_t classes = e.classes();
    std::vector<float> logits(static_cast<size_t>(kBatch * classes));
    int64_t correct = 0;
    for (int64_t first = 0; first < test.count; first += kBatch) {
        const int64_t n = std::min(kBatch, test.count - first);
        e.run(test.x.data() + first * test.exampleSize(), n, logits.data());
        for (int64_t i = 0; i < n; ++i) {
            const float* row = logits.data() + i * classes;
            correct += (std::max_element(row, row + classes) - row) == test.labels[static_cast<size_t>(first + i)];
        }
    }
    return test.count ? double(correct) / double(test.count) : 0.0;
}

}  // namespace

QuantizedOutcome quantizeAndMeasure(const engine::graph::Graph& graph, const std::vector<float>& calibration,
                                    const engine::EvalSet& test, const CalibrationOptions& options, int threads) {
    QuantizedOutcome out;
    int64_t per = 1;
    for (int64_t d : graph.sample_shape) per *= d;
    per = std::max<int64_t>(1, per);
    out.quantized = quantizeGraph(graph, calibration.data(), static_cast<int64_t>(calibration.size()) / per, options);
    const engine::graph::Graph fp32 = engine::graph::optimizeForInference(graph);
    out.record.fp32_weight_bytes = fp32WeightBytes(fp32);
    out.record.int8_weight_bytes = out.quantized.weightBytes();
    out.record.isa = effectiveIsa();
    if (test.count == 0) return out;
    // The test set arrives scaled, as the pipeline scales it: both executors take it as it is (the
    // int8 input codes are x / scale either way).
    engine::graph::Graph fp32Scaled = fp32;
    fp32Scaled.metadata.input_scale = 1.0f;
    QuantizedGraph int8Scaled = out.quantized;
    int8Scaled.graph.metadata.input_scale = 1.0f;
    engine::CpuDevice device(threads);
    device.bindThreads();
    CompiledGraph reference(fp32Scaled, device);
    Int8CompiledGraph int8(int8Scaled, device);
    out.record.test_examples = test.count;
    out.record.fp32_accuracy = accuracy(reference, test);
    out.record.int8_accuracy = accuracy(int8, test);
    return out;
}

double fp32Accuracy(const engine::graph::Graph& graph, const engine::EvalSet& test, int threads) {
    engine::graph::Graph scaled = engine::graph::optimizeForInference(graph);
    scaled.metadata.input_scale = 1.0f;  // the test set arrives scaled
    engine::CpuDevice device(threads);
    device.bindThreads();
    CompiledGraph executor(scaled, device);
    return accuracy(executor, test);
}

QuantizedOutcome quantizeModel(const ModelSource& model, const CalibrationOptions& options, int threads) {
    if (options.batches < 1 || options.batch_size < 1)
        throw std::invalid_argument("calibration needs at least one batch of at least one example (got " +
                                    std::to_string(options.batches) + " x " + std::to_string(options.batch_size) + ")");
    const ModelRun& run = requireRun(model, "quantizing (calibration on the training set, accuracy on the test set)");
    const std::vector<float> calibration = calibrationExamples(model, options.batches * options.batch_size, options.seed);
    return quantizeAndMeasure(model.graph, calibration, run.data.test, options, threads);
}

}  // namespace trainbench::app
