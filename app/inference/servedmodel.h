#pragma once
// MODEL opened for serving: the run's graph (modelsource.h) as the server's servable in the asked
// precision — fp32 (CompiledGraph) or int8 (calibrated at start on training batches, Int8CompiledGraph)
// — with what a server and a load test report about it.
#include <cstdint>
#include <optional>
#include <string>

#include "app/inference/modelsource.h"
#include "engine/inference/quantizedgraph.h"
#include "engine/serving/servable.h"

namespace trainbench::app {

struct ServedModelOptions {
    std::string name;                  // empty: the source's name
    std::string precision = "fp32";    // fp32 | int8
    int64_t calibration_batches = 4;   // int8: batches of kCalibrationBatchSize training examples
    uint64_t calibration_seed = 0;
    int threads_per_instance = 1;
    int64_t max_batch = 1000;
};

inline constexpr int64_t kCalibrationBatchSize = 64;

struct ServedModel {
    ModelSource source;
    engine::serving::Servable servable;
    std::string precision;
    int64_t weight_bytes = 0;       // as served: fp32 initializers, or s8 weights with their scales
    int64_t fp32_weight_bytes = 0;
    std::string calibration;        // int8: "4 batches x 64 training examples, minmax, seed 0, u8 levels 255"
};

// std::invalid_argument for a precision other than fp32/int8 or a bad name; what openModel,
// calibrationExamples and quantizeGraph throw.
ServedModel openServedModel(const std::string& model, const std::string& db, const ServedModelOptions& options);

// What a load test records of the model it serves, measured as the server builds it (the same
// calibration, so the same int8 model): its weights as served and in fp32, its top-1 accuracy on the
// run's full test set as served and in fp32, and the calibration (int8). The fp32-vs-int8 comparison
// of the Inference page reads these.
struct ServedModelQuality {
    std::string precision;
    int64_t weight_bytes = 0;
    int64_t fp32_weight_bytes = 0;
    int64_t test_examples = 0;
    double accuracy = 0;       // as served
    double fp32_accuracy = 0;
    std::string calibration;   // int8 only
};

// A run's model only (an ONNX file carries no test set): std::invalid_argument otherwise, and for
// what openServedModel refuses. `threads` 0: every core.
ServedModelQuality measureServedModel(const ModelSource& source, const ServedModelOptions& options, int threads = 0);

// "4 batches x 64 training examples, minmax, seed 0, u8 levels 255".
std::string calibrationText(const engine::inference::CalibrationRecord& record);

}  // namespace trainbench::app
