#pragma once
// The inference benchmarks' models and examples: W1 (mlp) and W2 (cnn) as compiled graphs with
// freshly initialised parameters (speed does not depend on their values), and Fashion-MNIST test
// images as the clients send them (pixels as stored).
#include <string>

#include "app/loadtest/requestset.h"
#include "engine/graph/graph.h"

namespace trainbench::bench {

// "w1" or "w2"; its input scaling is 1/255, so clients send stored pixels as to `trainbench-cli serve`.
engine::graph::Graph workloadGraph(const std::string& workload);

// The first `count` test images of the Fashion-MNIST folder `dir`, nested {1, 28, 28}.
app::loadtest::ExampleSet testImages(const std::string& dir, int64_t count);

}  // namespace trainbench::bench
