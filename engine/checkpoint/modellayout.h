#pragma once
// What a model looks like layer by layer (kind, parameter and state counts, input and output shape),
// kept in a training checkpoint so that loading it into another model can say which layer differs
// instead of only that the parameter buffers have different sizes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/model/model.h"

namespace trainbench::engine {

// One line per layer, in the order the model runs them: "<kind> <params> <state> <in> <out>", the
// shapes as "1x28x28". Text, so that a checkpoint's model can be read with a hex dump.
inline constexpr const char* kModelLayoutShard = "model.layout";

struct LayerLayout {
    std::string kind;     // Layer::kind(): "dense", "conv2d", "batch_norm", ...
    int64_t params = 0;   // trainable values
    int64_t state = 0;    // non-trainable values (batch norm's running statistics)
    Dims in, out;         // per-example shapes
    bool operator==(const LayerLayout&) const = default;
};

std::vector<LayerLayout> modelLayout(const Model& model);
// The same from a model's layers alone (a LayerStack: no parameter buffer allocated).
std::vector<LayerLayout> modelLayout(const std::vector<std::unique_ptr<Layer>>& layers);
void saveModelLayout(CheckpointWriter& writer, const Model& model);
// The layout the checkpoint holds; nullopt for checkpoints written without one. CheckpointError
// naming the shard and line when the shard is there but unreadable.
std::optional<std::vector<LayerLayout>> readModelLayout(const Checkpoint& checkpoint);

// The first difference between a checkpoint's layout and a model's, as one clause such as
// "layer 3 (dense): checkpoint has 7850 parameters, this model has 15700" (layers counted from 0, as
// in model.layers); empty when they match.
std::string layoutDifference(const std::vector<LayerLayout>& checkpoint, const std::vector<LayerLayout>& model);

// Throws CheckpointError "<path>: the checkpoint holds another model: <difference>" when the
// checkpoint records a layout that differs from the model's. Checkpoints without a layout pass:
// their shard sizes are still checked when the values are copied.
void checkModelLayout(const Checkpoint& checkpoint, const Model& model);
void checkModelLayout(const Checkpoint& checkpoint, const std::vector<LayerLayout>& layout);

}  // namespace trainbench::engine
