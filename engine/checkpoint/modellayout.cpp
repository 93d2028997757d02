#include "engine/checkpoint/modellayout.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "engine/model/layerstack.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

// "-" for a shape without dimensions, so that every line has five fields.
std::string shapeText(const Dims& d) { return d.empty() ? "-" : dimsText(d); }

bool parseInt(const std::string& text, int64_t& out) {
    const char* end = text.data() + text.size();
    const auto r = std::from_chars(text.data(), end, out);
    return r.ec == std::errc() && r.ptr == end && out >= 0;
}

bool parseShape(const std::string& text, Dims& out) {
    out.clear();
    if (text == "-") return true;
    std::istringstream in(text);
    std::string part;
    while (std::getline(in, part, 'x')) {
        int64_t v = 0;
        if (!parseInt(part, v)) return false;
        out.push_back(v);
    }
    return !out.empty();
}

std::string plural(int64_t n, const char* what) { return std::to_string(n) + " " + what; }

}  // namespace

std::vector<LayerLayout> modelLayout(const Model& model) { return modelLayout(model.layers()); }

std::vector<LayerLayout> modelLayout(const std::vector<std::unique_ptr<Layer>>& layers) {
    std::vector<LayerLayout> out;
    for (const auto& l : layers)
        out.push_back({l->kind(), l->paramCount(), l->stateCount(), l->inputShape(), l->outputShape()});
    return out;
}

void saveModelLayout(CheckpointWriter& writer, const Model& model) {
    std::string text;
    for (const LayerLayout& l : modelLayout(model))
        text += l.kind + " " + std::to_string(l.params) + " " + std::to_string(l.state) + " " + shapeText(l.in) + " " +
                shapeText(l.out) + "\n";
    writer.add(kModelLayoutShard, text.data(), text.size());
}

std::optional<std::vector<LayerLayout>> readModelLayout(const Checkpoint& ck) {
    if (!ck.has(kModelLayoutShard)) return std::nullopt;
    const std::vector<uint8_t>& b = ck.bytes(kModelLayoutShard);
    std::istringstream in(std::string(b.begin(), b.end()));
    std::vector<LayerLayout> out;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        std::istringstream fields(line);
        std::string params, state, inShape, outShape, extra;
        LayerLayout l;
        if (!(fields >> l.kind >> params >> state >> inShape >> outShape) || (fields >> extra) ||
            !parseInt(params, l.params) || !parseInt(state, l.state) || !parseShape(inShape, l.in) ||
            !parseShape(outShape, l.out))
            throw CheckpointError(ck.path() + ": shard '" + kModelLayoutShard + "' line " + std::to_string(n) +
                                  " is not '<kind> <params> <state> <in shape> <out shape>': \"" + line + "\"");
        out.push_back(std::move(l));
    }
    return out;
}

std::string layoutDifference(const std::vector<LayerLayout>& ck, const std::vector<LayerLayout>& model) {
    for (size_t i = 0; i < ck.size() && i < model.size(); ++i) {
        const LayerLayout &a = ck[i], &b = model[i];
        const std::string layer = "layer " + std::to_string(i) + " (" + b.kind + ")";
        if (a.kind != b.kind)
            return "layer " + std::to_string(i) + ": checkpoint has a " + a.kind + " layer, this model a " + b.kind;
        if (a.params != b.params)
            return layer + ": checkpoint has " + plural(a.params, "parameters") + ", this model has " +
                   std::to_string(b.params);
        if (a.in != b.in || a.out != b.out)
            return layer + ": checkpoint maps " + dimsText(a.in) + " to " + dimsText(a.out) + ", this model " +
                   dimsText(b.in) + " to " + dimsText(b.out);
        if (a.state != b.state)
            return layer + ": checkpoint has " + plural(a.state, "values of running statistics") +
                   ", this model has " + std::to_string(b.state);
    }
    if (ck.size() != model.size())
        return "checkpoint has " + plural(static_cast<int64_t>(ck.size()), "layers") + ", this model has " +
               std::to_string(model.size()) + " (the first " + std::to_string(std::min(ck.size(), model.size())) +
               " agree)";
    return {};
}

void checkModelLayout(const Checkpoint& ck, const Model& model) { checkModelLayout(ck, modelLayout(model)); }

void checkModelLayout(const Checkpoint& ck, const std::vector<LayerLayout>& layout) {
    const std::optional<std::vector<LayerLayout>> saved = readModelLayout(ck);
    if (!saved) return;
    const std::string diff = layoutDifference(*saved, layout);
    if (!diff.empty()) throw CheckpointError(ck.path() + ": the checkpoint holds another model: " + diff);
}

}  // namespace trainbench::engine
