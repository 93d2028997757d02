#pragma once
// What a load test of a trained run sends by default: the first examples of the run's own test set,
// as a client of the server sends them — pixels as stored (0-255, the graph scales them itself),
// nested in the model's sample shape ({1, 28, 28} for Fashion-MNIST).
#include <cstdint>

#include "app/inference/modelsource.h"
#include "app/loadtest/requestset.h"

namespace trainbench::app::loadtest {

// std::invalid_argument when the run's test set is empty, or MODEL is an ONNX file (no data).
ExampleSet modelTestExamples(const ModelSource& source, int64_t limit);

}  // namespace trainbench::app::loadtest
