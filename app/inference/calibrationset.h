#pragma once
// The examples a quantization calibrates on: drawn from the run's TRAINING set (never the test set
// its accuracy is measured on), as stored pixels, the graph's input.
#include <cstdint>
#include <vector>

#include "app/inference/modelsource.h"

namespace trainbench::app {

// count examples of the source's in-memory training set, drawn without replacement by a seeded
// shuffle (the same seed, the same examples). std::invalid_argument when the source has no
// in-memory training set (a streaming source, or an ONNX file, which has no data) or fewer
// examples than count.
std::vector<float> calibrationExamples(const ModelSource& source, int64_t count, uint64_t seed);

}  // namespace trainbench::app
