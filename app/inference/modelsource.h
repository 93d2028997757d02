#pragma once
// What the inference commands (serve, loadtest, predict, quantize, export-model) are given as
// MODEL, opened as an inference graph: a run of the store, by id or name, whose checkpoint holds the
// trained parameters, or an ONNX file (docs/onnx.md). A checkpoint holds no spec, data shape,
// classes or input scaling: they come from the run's experiment (runs.config_json), whose data is
// opened to learn them — the same data a quantization calibrates on and whose test set gives the
// accuracy next to fp32's. An ONNX file carries its shape and scaling itself, and no data.
#include <optional>
#include <stdexcept>
#include <string>

#include "app/experiment/experiment.h"
#include "engine/data/pipeline/datasource.h"
#include "engine/graph/graph.h"
#include "profiler/store/runid.h"

namespace trainbench::app {

// The run a model was trained in: what only a run of the store can say.
struct ModelRun {
    profiler::RunId id{0};
    Experiment experiment;                  // the run's experiment, as it ran
    engine::TrainingData data;              // its data, opened (shape, classes, training and test sets)
};

struct ModelSource {
    engine::graph::Graph graph;             // as trained (batch norm not folded, ReLUs apart), or as the file holds it
    std::optional<ModelRun> run;            // MODEL was a run; nullopt: an ONNX file
    std::string file;                       // MODEL was an ONNX file: its absolute path; empty for a run
    std::string description;                // "run 12 (fmnist-mlp) of runs.db, checkpoint /x/run-12.ckpt"
                                            // or "ONNX file /x/m.onnx (run 12 (fmnist-mlp) of runs.db)"
    std::string name;                       // the run's name ("fmnist-mlp") or the file's stem ("m"):
                                            // what `serve` serves it as
};

// MODEL names no run of the store (and no file). A std::invalid_argument, so that callers that do
// not tell it apart treat it as any bad MODEL; export-model exits 4 for it.
class ModelNotFound : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Whether MODEL is taken as an ONNX file rather than a run: its name ends in ".onnx".
bool namesOnnxFile(const std::string& model);

// MODEL given as a path ending in ".onnx" (read with engine::onnx::readOnnx), an existing file that
// parses as an ONNX model, or a run id or name of the store at `db` (the store is not opened for a
// file). ModelNotFound naming MODEL and the store when there is no such run; std::invalid_argument
// when the run kept no checkpoint or the store cannot be read; engine::onnx::OnnxError naming the
// file for one that is missing or not a model we can run; CheckpointError naming the file for a
// checkpoint that is missing, damaged or of another model; DataError for data that is gone.
ModelSource openModel(const std::string& model, const std::string& db);

// The run of `m`, for what needs the model's experiment or data; std::invalid_argument saying that
// `what` needs them and that `m`, an ONNX file, has none.
const ModelRun& requireRun(const ModelSource& m, const std::string& what);

// The graph's input scaling for the experiment's data: image sources are scaled by 1/255 in the
// pipeline, so stored pixels are what a client sends; CSV features arrive as they are.
engine::graph::GraphMetadata metadataFor(const Experiment& experiment);

}  // namespace trainbench::app
