#pragma once
// A stored run's checkpoint as an inference graph: what `predict`, `serve` and `export-model` start
// from when given a run.
//
// A checkpoint holds the parameters ("params"), the batch norm running statistics ("model.state")
// and the model's layout ("model.layout": per layer its kind, counts and shapes), but not the model
// spec (kernels, strides, paddings, epsilons) nor the data's shape, classes and scaling: those are
// in the run's experiment (the run store's config JSON). The app layer parses that experiment and
// passes them here as a ServableSource; the checkpoint's layout is checked against the spec's, so a
// spec that is not the run's is refused naming the first layer that differs.
#include <cstdint>
#include <string>

#include "engine/graph/graph.h"
#include "engine/model/modelspec.h"

namespace trainbench::engine::graph {

struct ServableSource {
    ModelSpec spec;          // the run's model (Experiment::model)
    Dims sample_shape;       // per-example input, {C, H, W} ({1, 28, 28} for Fashion-MNIST)
    int64_t classes = 0;
    // Scaling of stored pixels (image data sets: scale 1/255, as the input pipeline applies it),
    // class names, the run it came from. Copied into the graph.
    GraphMetadata metadata;
};

// The graph of the checkpoint at checkpointPath, as trained (batch norm not folded; serve it after
// optimizeForInference). CheckpointError naming the file for a damaged checkpoint, one of another
// model (the first differing layer) or one whose buffers do not fit the spec; GraphError for a spec
// that does not make a graph. metadata.source_run, when empty, becomes "checkpoint <path>".
Graph loadServableGraph(const std::string& checkpointPath, const ServableSource& source);

}  // namespace trainbench::engine::graph
