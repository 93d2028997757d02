#pragma once
// The graph of a model imported from ONNX (ModelSpec::onnx): read once per process and kept, so
// that estimating it on every device and batch size reads the file once.
#include <memory>
#include <string>

#include "engine/graph/graph.h"

namespace trainbench::engine {

// ModelError "model.onnx <path>: <what the importer said>" when the file cannot be imported.
std::shared_ptr<const graph::Graph> importedGraph(const std::string& path);

}  // namespace trainbench::engine
