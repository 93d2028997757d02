#pragma once
// `trainbench-cli quantize`'s work, apart from its printing: static post-training int8 of a model,
// calibrated on training examples, with its top-1 accuracy on the test set measured in fp32
// (CompiledGraph) and in int8 (Int8CompiledGraph), and the record its file keeps
// (engine/onnx/onnxquantized.h).
#include <cstdint>
#include <vector>

#include "app/inference/modelsource.h"
#include "engine/data/pipeline/inputpipeline.h"
#include "engine/inference/calibration.h"
#include "engine/onnx/onnxquantized.h"

namespace trainbench::app {

struct QuantizedOutcome {
    engine::inference::QuantizedGraph quantized;
    engine::onnx::QuantizationRecord record;  // sizes, test accuracies, ISA
};

// `graph` as trained (or imported); `calibration` holds options.batches x options.batch_size
// examples as stored (pixels 0..255 for images); `test` as the pipeline gives it (scaled by the
// graph's input_scale). `threads` 0: every core. invalid_argument / GraphError from quantizeGraph.
QuantizedOutcome quantizeAndMeasure(const engine::graph::Graph& graph, const std::vector<float>& calibration,
                                    const engine::EvalSet& test, const engine::inference::CalibrationOptions& options,
                                    int threads = 0);

// Top-1 accuracy of `graph` in fp32 (CompiledGraph) on `test` as the pipeline gives it (scaled).
double fp32Accuracy(const engine::graph::Graph& graph, const engine::EvalSet& test, int threads = 0);

// A run's model: calibrated on its training set (calibrationExamples, drawn with options.seed),
// measured on its full test set.
QuantizedOutcome quantizeModel(const ModelSource& model, const engine::inference::CalibrationOptions& options, int threads = 0);

}  // namespace trainbench::app
