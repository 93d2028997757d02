#include "engine/graph/graphfrommodel.h"

#include "engine/graph/nodeshape.h"

namespace trainbench::engine::graph {

namespace {

// Appends nodes one after the other, each reading the previous one's output, and takes their
// initializers from the model's buffers in the order the model's layers bind them.
class Builder {
public:
    Builder(std::span<const float> params, std::span<const float> state) : params_(params), state_(state) {}

    Graph graph;
    std::string current = "input";

    void conv(const std::string& name, int64_t filters, int64_t kernel, int64_t stride, int64_t pad, bool bias) {
        Node n = node(name, OpKind::Conv);
        n.kernel = kernel;
        n.stride = stride;
        n.pad = pad;
        n.inputs.push_back(take(name + ".weight", {filters, shape()[0], kernel, kernel}, params_, paramAt_));
        if (bias) n.inputs.push_back(take(name + ".bias", {filters}, params_, paramAt_));
        add(std::move(n));
    }
    void gemm(const std::string& name, int64_t units, bool bias) {
        Node n = node(name, OpKind::Gemm);
        int64_t features = 1;
        for (int64_t d : shape()) features *= d;
        n.inputs.push_back(take(name + ".weight", {units, features}, params_, paramAt_));
        if (bias) n.inputs.push_back(take(name + ".bias", {units}, params_, paramAt_));
        add(std::move(n));
    }
    void batchNorm(const std::string& name, float epsilon, float momentum) {
        Node n = node(name, OpKind::BatchNormalization);
        n.epsilon = epsilon;
        n.momentum = momentum;
        const Dims c{shape().at(0)};
        n.inputs.push_back(take(name + ".scale", c, params_, paramAt_));
        n.inputs.push_back(take(name + ".bias", c, params_, paramAt_));
        n.inputs.push_back(take(name + ".mean", c, state_, stateAt_));
        n.inputs.push_back(take(name + ".var", c, state_, stateAt_));
        add(std::move(n));
    }
    void simple(const std::string& name, OpKind kind) { add(node(name, kind)); }
    void pool(const std::string& name, int64_t kernel, int64_t stride, int64_t pad) {
        Node n = node(name, OpKind::MaxPool);
        n.kernel = kernel;
        n.stride = stride;
        n.pad = pad;
        add(std::move(n));
    }
    void sum(const std::string& name, const std::string& other, bool relu) {
        Node n = node(name, OpKind::Add);
        n.inputs.push_back(other);
        n.fused_relu = relu;
        add(std::move(n));
    }
    const Dims& shape() const { return shapes_.at(current); }
    void start(const Dims& sampleShape) { shapes_[current] = sampleShape; }

    void finish() const {
        if (paramAt_ != params_.size() || stateAt_ != state_.size())
            throw GraphError("the model's layers hold " + std::to_string(paramAt_) + " parameters and " +
                             std::to_string(stateAt_) + " state values, the buffers given " +
                             std::to_string(params_.size()) + " and " + std::to_string(state_.size()));
    }

private:
    Node node(const std::string& name, OpKind kind) const {
        Node n;
        n.name = name;
        n.kind = kind;
        n.inputs = {current};
        n.output = name;
        return n;
    }
    void add(Node n) {
        const std::string where = "node '" + n.name + "' (" + opKindName(n.kind) + ")";
        shapes_[n.output] = nodeOutputShape(graph, n, shapes_, where);
        current = n.output;
        graph.nodes.push_back(std::move(n));
    }
    std::string take(const std::string& name, Dims dims, std::span<const float> from, size_t& at) {
        size_t count = 1;
        for (int64_t d : dims) count *= static_cast<size_t>(d);
        if (from.size() - at < count)
            throw GraphError("initializer '" + name + "' needs " + std::to_string(count) + " values at offset " +
                             std::to_string(at) + " but the buffer holds " + std::to_string(from.size()));
        Initializer& init = graph.initializers[name];
        init.dims = std::move(dims);
        init.values.assign(from.begin() + static_cast<std::ptrdiff_t>(at),
                           from.begin() + static_cast<std::ptrdiff_t>(at + count));
        at += count;
        return name;
    }

    std::span<const float> params_, state_;
    size_t paramAt_ = 0, stateAt_ = 0;
    std::map<std::string, Dims> shapes_;
};

// ResNet's bottleneck as engine/layers/bottleneck.h runs it, parameters in its order (main branch
// a, b, c, then the projection shortcut).
void bottleneck(Builder& b, const std::string& name, const LayerSpec& s) {
    const std::string in = b.current;
    const int64_t channels = b.shape()[0], width = s.filters;
    b.conv(name + "/conv_a", width, 1, 1, 0, false);
    b.batchNorm(name + "/bn_a", s.epsilon, s.momentum);
    b.simple(name + "/relu_a", OpKind::Relu);
    b.conv(name + "/conv_b", width, 3, s.stride, 1, false);
    b.batchNorm(name + "/bn_b", s.epsilon, s.momentum);
    b.simple(name + "/relu_b", OpKind::Relu);
    b.conv(name + "/conv_c", 4 * width, 1, 1, 0, false);
    b.batchNorm(name + "/bn_c", s.epsilon, s.momentum);
    std::string shortcut = in;
    if (s.stride != 1 || channels != 4 * width) {
        const std::string mainOut = b.current;
        b.current = in;
        b.conv(name + "/conv_shortcut", 4 * width, 1, s.stride, 0, false);
        b.batchNorm(name + "/bn_shortcut", s.epsilon, s.momentum);
        shortcut = b.current;
        b.current = mainOut;
    }
    b.sum(name + "/add", shortcut, true);
}

}  // namespace

Graph graphFromModel(const ModelSpec& spec, const Dims& sampleShape, int64_t classes, std::span<const float> params,
                     std::span<const float> state) {
    Builder b(params, state);
    b.graph.input = "input";
    b.graph.sample_shape = sampleShape;
    b.graph.classes = classes;
    b.start(sampleShape);
    for (size_t i = 0; i < spec.layers.size(); ++i) {
        const LayerSpec& s = spec.layers[i];
        const std::string name = std::string(layerKindName(s.kind)) + "_" + std::to_string(i);
        switch (s.kind) {
            case LayerKind::Dense:
                b.gemm(name, s.units == LayerSpec::kUnitsPerClass ? classes : s.units, s.bias);
                break;
            case LayerKind::Conv2D: b.conv(name, s.filters, s.kernel, s.stride, s.padding, s.bias); break;
            case LayerKind::MaxPool2D: b.pool(name, s.kernel, s.stride > 0 ? s.stride : s.kernel, s.padding); break;
            case LayerKind::ReLU: b.simple(name, OpKind::Relu); break;
            case LayerKind::Flatten: b.simple(name, OpKind::Flatten); break;
            case LayerKind::Dropout: break;  // the identity at inference
            case LayerKind::BatchNorm: b.batchNorm(name, s.epsilon, s.momentum); break;
            case LayerKind::GlobalAvgPool:
                b.simple(name, OpKind::GlobalAveragePool);
                b.simple(name + "/flatten", OpKind::Flatten);
                break;
            case LayerKind::Bottleneck: bottleneck(b, name, s); break;
        }
    }
    b.finish();
    b.graph.output = b.current;
    b.graph.validate();
    return std::move(b.graph);
}

}  // namespace trainbench::engine::graph
