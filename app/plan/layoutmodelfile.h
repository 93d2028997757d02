#pragma once
// The model the layout planner splits (trainbench-cli plan-layouts, docs/model-parallelism.md): a
// transformer described by its sizes in a small JSON file (experiments/models/gpt3-175b.json), or read
// from an ONNX graph (weights not needed) whose repeated blocks are its layers.
#include <cstdint>
#include <optional>
#include <string>

#include "engine/emulation/transformershape.h"

namespace trainbench::app {

struct LayoutModel {
    engine::TransformerCosts costs;
    std::optional<int64_t> global_batch;  // the file's, when it gives one
    std::string source;                   // the path it came from
};

// A description file: {"name", "layers", "hidden", "heads", "sequence", "vocab", ["ffn"],
// ["global_batch"], ["about"]}. std::invalid_argument listing every problem, one per line, as
// "<source>: <key>: <what was expected>" (syntax errors by line and column).
LayoutModel parseLayoutModelText(const std::string& text, const std::string& source);

// A path ending in .onnx is imported as a graph (engine/emulation/graphtransformer.h); anything else is
// read as a description file. std::invalid_argument naming the file and what is wrong.
LayoutModel readLayoutModel(const std::string& path);

}  // namespace trainbench::app
