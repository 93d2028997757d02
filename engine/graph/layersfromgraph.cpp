#include "engine/graph/layersfromgraph.h"

#include <optional>

#include "engine/graph/graphpasses.h"

namespace trainbench::engine::graph {

namespace {

constexpr size_t kListedNodes = 10;

std::string describe(const Node& n, const std::string& detail = "") {
    return "'" + n.name + "' (" + opKindName(n.kind) + detail + ")";
}

class Mapper {
public:
    explicit Mapper(const Graph& g) : g_(g), shapes_(g.valueShapes()), current_(g.input) {}

    TrainableLayers run() {
        for (size_t i = 0; i < g_.nodes.size();) {
            if (const size_t used = bottleneck(i)) {
                i += used;
                continue;
            }
            chain(g_.nodes[i]);
            ++i;
        }
        if (!missing_.empty()) {
            std::string list;
            for (size_t k = 0; k < missing_.size() && k < kListedNodes; ++k) list += (k ? ", " : "") + missing_[k];
            if (missing_.size() > kListedNodes) list += " and " + std::to_string(missing_.size() - kListedNodes) + " more";
            throw GraphError(std::to_string(missing_.size()) + (missing_.size() == 1 ? " node has" : " nodes have") +
                             " no backward in the engine: " + list +
                             " (it trains chains of Conv with group 1, Gemm, BatchNormalization, Relu, MaxPool, "
                             "GlobalAveragePool and Flatten, and ResNet bottlenecks)");
        }
        if (!structure_.empty()) throw GraphError(structure_);
        if (current_ != g_.output)
            throw GraphError("the graph's output '" + g_.output + "' is not what its last node writes ('" + current_ + "')");
        return std::move(out_);
    }

private:
    const Node* at(size_t k) const { return k < g_.nodes.size() ? &g_.nodes[k] : nullptr; }
    int64_t filters(const Node& conv) const { return g_.initializer(conv.inputs[1], conv.name).dims.at(0); }
    void params(const std::string& name, const Node& n) {
        const std::vector<float>& v = g_.initializer(name, n.name).values;
        out_.params.insert(out_.params.end(), v.begin(), v.end());
        out_.param_names.push_back(name);
    }
    void batchNormWeights(const Node& bn) {
        params(bn.inputs[1], bn);
        params(bn.inputs[2], bn);
        for (size_t k : {size_t{3}, size_t{4}}) {
            const std::vector<float>& v = g_.initializer(bn.inputs[k], bn.name).values;
            out_.state.insert(out_.state.end(), v.begin(), v.end());
        }
    }
    void layer(LayerSpec s, const std::string& name) {
        out_.layer_names.push_back(name);
        flat_ = s.kind == LayerKind::Dense || s.kind == LayerKind::Flatten || s.kind == LayerKind::GlobalAvgPool ||
                (flat_ && s.kind != LayerKind::Conv2D);
        out_.layers.push_back(s);
    }
    void relu(const std::string& name) { layer(LayerSpec{.kind = LayerKind::ReLU}, name); }

    // One node of a chain: it reads the previous one's output.
    void chain(const Node& n) {
        const auto noBackward = [&](const std::string& why) { missing_.push_back(describe(n, why)); };
        if (n.kind == OpKind::Softmax && n.output == g_.output && !n.inputs.empty() && n.inputs[0] == current_) {
            // A classifier's closing softmax is the loss's own (softmax cross-entropy on the logits).
        } else if (n.kind == OpKind::Add) {
            noBackward(" outside a ResNet bottleneck");
        } else if (n.kind != OpKind::Conv && n.kind != OpKind::Gemm && n.kind != OpKind::BatchNormalization &&
                   n.kind != OpKind::Relu && n.kind != OpKind::MaxPool && n.kind != OpKind::GlobalAveragePool &&
                   n.kind != OpKind::Flatten) {
            noBackward("");
        } else if (n.kind == OpKind::Conv && n.group != 1) {
            noBackward(" with group " + std::to_string(n.group));
        } else if ((n.kind == OpKind::Conv || n.kind == OpKind::MaxPool) && !n.squareWindow()) {
            noBackward(" with a " + n.windowText());
        } else if (n.inputs.empty() || n.inputs[0] != current_) {
            // Where a node without backward went before, the chain may be broken because of it.
            if (structure_.empty() && missing_.empty())
                structure_ = "node " + describe(n) + " reads '" + (n.inputs.empty() ? "" : n.inputs[0]) +
                             "', not the output of the node before it ('" + current_ +
                             "'): the engine trains chains of layers and ResNet bottlenecks";
        } else {
            switch (n.kind) {
                case OpKind::Conv:
                    layer(LayerSpec{.kind = LayerKind::Conv2D, .filters = static_cast<int>(filters(n)),
                                    .kernel = static_cast<int>(n.kernel), .stride = static_cast<int>(n.stride),
                                    .padding = static_cast<int>(n.pad), .bias = n.inputs.size() == 3},
                          n.name);
                    params(n.inputs[1], n);
                    if (n.inputs.size() == 3) params(n.inputs[2], n);
                    break;
                case OpKind::Gemm: {
                    const int64_t units = g_.initializer(n.inputs[1], n.name).dims.at(0);
                    layer(LayerSpec{.kind = LayerKind::Dense, .units = static_cast<int>(units), .bias = n.inputs.size() == 3}, n.name);
                    params(n.inputs[1], n);
                    if (n.inputs.size() == 3) params(n.inputs[2], n);
                    break;
                }
                case OpKind::BatchNormalization:
                    layer(LayerSpec{.kind = LayerKind::BatchNorm, .momentum = n.momentum, .epsilon = n.epsilon}, n.name);
                    batchNormWeights(n);
                    break;
                case OpKind::Relu: relu(n.name); break;
                case OpKind::MaxPool:
                    layer(LayerSpec{.kind = LayerKind::MaxPool2D, .kernel = static_cast<int>(n.kernel),
                                    .stride = static_cast<int>(n.stride), .padding = static_cast<int>(n.pad)},
                          n.name);
                    break;
                case OpKind::GlobalAveragePool: layer(LayerSpec{.kind = LayerKind::GlobalAvgPool}, n.name); break;
                case OpKind::Flatten:
                    // The engine's global average pooling already gives [channels]: nothing to flatten.
                    if (!flat_) layer(LayerSpec{.kind = LayerKind::Flatten}, n.name);
                    break;
                default: break;  // the kinds without a backward: handled above
            }
            if (n.fused_relu) relu(n.name + "/relu");
        }
        current_ = n.output;
    }

    // A ResNet bottleneck starting at node i, as engine/layers/bottleneck.h computes it: conv 1x1 ->
    // BN -> ReLU -> conv 3x3 (the block's stride) -> BN -> ReLU -> conv 1x1 (4x the width) -> BN,
    // plus a 1x1 projection + BN of the input exactly when the stride or the channels change, then
    // Add and ReLU. The node count it covers, 0 when it is not one.
    size_t bottleneck(size_t i) {
        const std::string in = current_;
        const Dims& x = shapes_.at(in);
        if (x.size() != 3 || useCount(g_, in) != 2) return 0;
        size_t k = i;
        std::vector<const Node*> convs, bns;
        // conv (no bias, group 1) -> BN [-> ReLU, fused or its own node]; the value it ends with.
        const auto unit = [&](const std::string& from, int64_t kernel, int64_t pad, bool withRelu) -> std::optional<std::string> {
            const Node* c = at(k);
            if (!c || c->kind != OpKind::Conv || c->inputs.size() != 2 || c->inputs[0] != from || c->kernel != kernel ||
                c->pad != pad || !c->squareWindow() || c->group != 1 || c->fused_relu || useCount(g_, c->output) != 1)
                return std::nullopt;
            const Node* b = at(k + 1);
            if (!b || b->kind != OpKind::BatchNormalization || b->inputs[0] != c->output) return std::nullopt;
            k += 2;
            std::string out = b->output;
            if (withRelu && !b->fused_relu) {
                const Node* r = at(k);
                if (!r || r->kind != OpKind::Relu || r->inputs[0] != out || useCount(g_, out) != 1) return std::nullopt;
                out = r->output;
                ++k;
            } else if (b->fused_relu != withRelu) {
                return std::nullopt;
            }
            if (useCount(g_, out) != 1) return std::nullopt;
            convs.push_back(c);
            bns.push_back(b);
            return out;
        };
        const auto a = unit(in, 1, 0, true);
        if (!a || convs[0]->stride != 1) return 0;
        const int64_t width = filters(*convs[0]);
        const auto b = unit(*a, 3, 1, true);
        if (!b || filters(*convs[1]) != width) return 0;
        const int64_t stride = convs[1]->stride;
        const auto c = unit(*b, 1, 0, false);
        if (!c || convs[2]->stride != 1 || filters(*convs[2]) != 4 * width) return 0;
        std::string shortcut = in;
        if (stride != 1 || x[0] != 4 * width) {
            const auto s = unit(in, 1, 0, false);
            if (!s || convs[3]->stride != stride || filters(*convs[3]) != 4 * width) return 0;
            shortcut = *s;
        }
        const Node* add = at(k);
        if (!add || add->kind != OpKind::Add ||
            !((add->inputs[0] == *c && add->inputs[1] == shortcut) || (add->inputs[0] == shortcut && add->inputs[1] == *c)))
            return 0;
        ++k;
        std::string out = add->output;
        if (!add->fused_relu) {
            const Node* r = at(k);
            if (!r || r->kind != OpKind::Relu || r->inputs[0] != out || useCount(g_, out) != 1) return 0;
            out = r->output;
            ++k;
        }
        for (const Node* bn : bns)
            if (bn->epsilon != bns[0]->epsilon || bn->momentum != bns[0]->momentum) return 0;
        layer(LayerSpec{.kind = LayerKind::Bottleneck, .filters = static_cast<int>(width), .stride = static_cast<int>(stride),
                        .momentum = bns[0]->momentum, .epsilon = bns[0]->epsilon},
              add->name);
        for (size_t u = 0; u < convs.size(); ++u) {
            params(convs[u]->inputs[1], *convs[u]);
            params(bns[u]->inputs[1], *bns[u]);
            params(bns[u]->inputs[2], *bns[u]);
        }
        for (const Node* bn : bns)
            for (size_t s : {size_t{3}, size_t{4}}) {
                const std::vector<float>& v = g_.initializer(bn->inputs[s], bn->name).values;
                out_.state.insert(out_.state.end(), v.begin(), v.end());
            }
        current_ = out;
        return k - i;
    }

    const Graph& g_;
    std::map<std::string, Dims> shapes_;
    std::string current_;
    bool flat_ = false;  // the engine's value is [features] (after dense, flatten, global pooling)
    TrainableLayers out_;
    std::vector<std::string> missing_;
    std::string structure_;
};

}  // namespace

TrainableLayers layersFromGraph(const Graph& graph) {
    if (graph.weightless)
        throw GraphError("the graph is stripped to shapes: it has no weights to start training from (estimates take it)");
    graph.validate();
    return Mapper(graph).run();
}

}  // namespace trainbench::engine::graph
