#include "engine/checkpoint/trainingcheckpoint.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

size_t checkedCount(int64_t count) {
    if (count < 0) throw std::invalid_argument("parameter count " + std::to_string(count) + " is negative");
    return static_cast<size_t>(count);
}

std::string joined(const std::vector<std::string>& names, const char* separator) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : separator) + n;
    return s;
}

std::vector<std::string> namesOf(const std::vector<OptimizerStateSpan>& state) {
    std::vector<std::string> names;
    for (const OptimizerStateSpan& s : state) names.push_back(s.name);
    return names;
}

// The names saveTraining listed, one per line.
std::vector<std::string> savedStateNames(const Checkpoint& ck) {
    if (!ck.has(kOptimizerStateShard))
        throw CheckpointError(ck.path() + ": not a training checkpoint: it has no shard '" +
                              std::string(kOptimizerStateShard) + "' naming the optimizer's state");
    const std::vector<uint8_t>& b = ck.bytes(kOptimizerStateShard);
    std::vector<std::string> names;
    std::string cur;
    for (uint8_t c : b) {
        if (c != '\n') {
            cur += static_cast<char>(c);
            continue;
        }
        names.push_back(cur);
        cur.clear();
    }
    if (!cur.empty()) names.push_back(cur);
    return names;
}

// The shard must hold exactly `expected` floats; `why` says where that number comes from.
void checkFloats(const Checkpoint& ck, const std::string& name, size_t expected, const std::string& why) {
    const size_t bytes = ck.bytes(name).size();
    if (bytes == expected * sizeof(float)) return;
    const std::string held = bytes % sizeof(float) == 0
                                 ? std::to_string(bytes / sizeof(float)) + " float32 values (" + std::to_string(bytes) + " bytes)"
                                 : std::to_string(bytes) + " bytes (not a whole number of float32 values)";
    throw CheckpointError(ck.path() + ": shard '" + name + "' holds " + held + "; expected " +
                          std::to_string(expected) + " (" + why + ")");
}

// The model state must be there exactly when the model keeps some, and of its size.
void checkModelState(const Checkpoint& ck, size_t expected) {
    if (expected == 0) {
        if (ck.has(kModelStateShard) && !ck.bytes(kModelStateShard).empty())
            throw CheckpointError(ck.path() + ": the checkpoint holds model state (shard '" + std::string(kModelStateShard) +
                                  "': batch norm running statistics) but this model keeps none; it was saved from "
                                  "another model");
        return;
    }
    if (!ck.has(kModelStateShard))
        throw CheckpointError(ck.path() + ": the checkpoint has no shard '" + std::string(kModelStateShard) +
                              "' with this model's " + std::to_string(expected) +
                              " values of batch norm running statistics (it was saved from a model without batch "
                              "norm, or by a build that did not save them)");
    checkFloats(ck, kModelStateShard, expected, "the model's batch norm running statistics");
}

void copyOut(const Checkpoint& ck, const std::string& name, float* dst) {
    const std::vector<uint8_t>& b = ck.bytes(name);
    if (!b.empty()) std::memcpy(dst, b.data(), b.size());
}

}  // namespace

void saveTraining(CheckpointWriter& writer, const float* params, int64_t count, Optimizer& optimizer,
                  std::span<const float> modelState) {
    writer.addFloats(kParamsShard, {params, checkedCount(count)});
    if (!modelState.empty()) writer.addFloats(kModelStateShard, modelState);
    const std::vector<OptimizerStateSpan> state = optimizer.state();
    const std::string list = joined(namesOf(state), "\n");
    writer.add(kOptimizerStateShard, list.data(), list.size());
    for (const OptimizerStateSpan& s : state) writer.addFloats(s.name, s.values);
}

void restoreTraining(const Checkpoint& ck, float* params, int64_t count, Optimizer& optimizer,
                     std::span<float> modelState) {
    const size_t n = checkedCount(count);
    checkFloats(ck, kParamsShard, n, "the model's parameter count");
    checkModelState(ck, modelState.size());
    const std::vector<OptimizerStateSpan> state = optimizer.state();
    // Another optimizer's state (Adam's moments into SGD, say) would resume a different run.
    const std::vector<std::string> saved = savedStateNames(ck), wanted = namesOf(state);
    if (saved != wanted)
        throw CheckpointError(ck.path() + ": the checkpoint holds optimizer state {" + joined(saved, ", ") +
                              "}, this optimizer keeps {" + joined(wanted, ", ") + "}");
    for (const OptimizerStateSpan& s : state)
        checkFloats(ck, s.name, s.values.size(), "the size of this optimizer's '" + s.name + "'");

    copyOut(ck, kParamsShard, params);
    if (!modelState.empty()) copyOut(ck, kModelStateShard, modelState.data());
    for (const OptimizerStateSpan& s : state) copyOut(ck, s.name, s.values.data());
    optimizer.stateRestored();
}

void restoreParams(const Checkpoint& ck, float* params, int64_t count, std::span<float> modelState) {
    const size_t n = checkedCount(count);
    checkFloats(ck, kParamsShard, n, "the model's parameter count");
    checkModelState(ck, modelState.size());
    copyOut(ck, kParamsShard, params);
    if (!modelState.empty()) copyOut(ck, kModelStateShard, modelState.data());
}

}  // namespace trainbench::engine
