#pragma once
// What the inference commands (serve, loadtest, predict, quantize, export-model) are given as
// MODEL, opened as an inference graph: a run of the store, by id or name, whose checkpoint holds the
// trained parameters. The checkpoint holds no spec, data shape, classes or input scaling: they come
// from the run's experiment (runs.config_json), whose data is opened to learn them — the same data
// a quantization calibrates on and whose test set gives the accuracy next to fp32's.
#include <optional>
#include <string>

#include "app/experiment/experiment.h"
#include "engine/data/pipeline/datasource.h"
#include "engine/graph/graph.h"
#include "profiler/store/runid.h"

namespace trainbench::app {

struct ModelSource {
    engine::graph::Graph graph;             // as trained: batch norm not folded, ReLUs apart
    Experiment experiment;                  // the run's experiment, as it ran
    engine::TrainingData data;              // its data, opened (shape, classes, training and test sets)
    profiler::RunId run{0};
    std::string description;                // "run 12 (fmnist-mlp) of runs.db, checkpoint /x/run-12.ckpt"
    std::string name;                       // the run's name ("fmnist-mlp"): what `serve` serves it as
};

// MODEL given as a run id or name of the store at `db`. std::invalid_argument naming MODEL and the
// store when there is no such run, or it kept no checkpoint; CheckpointError naming the file for a
// checkpoint that is missing, damaged or of another model; DataError for data that is gone.
ModelSource openModel(const std::string& model, const std::string& db);

// The graph's input scaling for the experiment's data: image sources are scaled by 1/255 in the
// pipeline, so stored pixels are what a client sends; CSV features arrive as they are.
engine::graph::GraphMetadata metadataFor(const Experiment& experiment);

}  // namespace trainbench::app
