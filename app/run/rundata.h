#pragma once
// Stage 3 of a run (runExperiment): the data, opened for the run's global batch, said in one line,
// and the input pipeline's choices kept with the run when they were tuned or it streams.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/experiment/experiment.h"
#include "engine/data/pipeline/datasource.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

// `writer` may be null (a rank that records nothing, a test). Throws what openTrainingData throws.
engine::TrainingData openRunData(const Experiment& x, int64_t globalBatch,
                                 const std::function<void(const std::string&)>& say, profiler::RunWriter* writer);

// What the input pipeline runs with (input.*, storage.*), kept with the run (autotune's choice in
// particular).
std::vector<std::pair<std::string, std::string>> pipelineAttributes(const engine::TrainingData& d);

}  // namespace trainbench::app
