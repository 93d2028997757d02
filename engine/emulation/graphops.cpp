#include "engine/emulation/graphops.h"

#include <set>
#include <stdexcept>

#include "engine/emulation/footprint.h"
#include "engine/graph/graphpasses.h"
#include "engine/layers/opcosts.h"
#include "engine/optim/optimizer.h"

namespace trainbench::engine {

namespace {

constexpr double kGraphFloatBytes = 4.0;

double valueCount(const Dims& d) {
    double n = 1.0;
    for (int64_t v : d) n *= static_cast<double>(v);
    return n;
}

// The ops a ReLU after them runs inside (a oneDNN post-op; the Add as a residual block's sum runs it).
bool fusesRelu(graph::OpKind k) {
    return k == graph::OpKind::Conv || k == graph::OpKind::Gemm || k == graph::OpKind::BatchNormalization || k == graph::OpKind::MaxPool ||
           k == graph::OpKind::Add;
}

class GraphDescriber {
public:
    GraphDescriber(const graph::Graph& g, int64_t batch, bool training) : g_(g), batch_(batch), training_(training) {
        if (batch <= 0) throw std::invalid_argument("op graph: the batch must be positive, got " + std::to_string(batch));
        g.validate();
        shapes_ = g.valueShapes();
        for (size_t i = 0; i < g.nodes.size(); ++i) producer_[g.nodes[i].output] = i;
        // A value needs a gradient when some node upstream of it has parameters.
        for (const graph::Node& n : g.nodes) {
            bool needs = paramCount(n) > 0;
            for (const std::string& in : n.inputs) needs = needs || gradient_.count(in);
            if (needs) gradient_.insert(n.output);
        }
    }

    // Forward ops in node order; backward ops per node (in the order the node's layer would list them).
    void describe(std::vector<OpDesc>& forward, std::vector<std::vector<OpDesc>>& backward) {
        backward.assign(g_.nodes.size(), {});
        for (size_t i = 0; i < g_.nodes.size(); ++i) {
            const graph::Node& n = g_.nodes[i];
            std::vector<OpDesc> ops;
            node(n, ops);
            // A value read by k nodes gets its k gradients summed by k - 1 adds (a residual fork).
            if (training_ && gradient_.count(n.output))
                for (int k = graph::useCount(g_, n.output); k > 1; --k)
                    ops.emplace_back(opcost::binaryAdd(dims(n.output), false), StepPart::Backward);
            for (OpDesc& op : ops) {
                op.layer = n.name;
                (op.part == StepPart::Forward ? forward : backward[i]).push_back(std::move(op));
            }
        }
    }

    static int64_t paramCount(const graph::Graph& g, const graph::Node& n) {
        // A MatMul's weight, a layer norm's scale and bias, an embedding's table, and an Add's bias (an
        // initializer of more than one value: a scalar constant is not trained) are parameters too.
        if ((n.kind == graph::OpKind::MatMul || n.kind == graph::OpKind::Gather || n.kind == graph::OpKind::Add) &&
            n.inputs.size() == 2 && g.initializers.count(n.inputs[1])) {
            const double c = valueCount(g.initializers.at(n.inputs[1]).dims);
            return n.kind == graph::OpKind::Add && c < 2.0 ? 0 : static_cast<int64_t>(c);
        }
        if (n.kind == graph::OpKind::LayerNormalization)
            return static_cast<int64_t>(valueCount(g.initializers.at(n.inputs[1]).dims) + valueCount(g.initializers.at(n.inputs[2]).dims));
        if (n.kind != graph::OpKind::Conv && n.kind != graph::OpKind::Gemm && n.kind != graph::OpKind::BatchNormalization) return 0;
        int64_t count = 0;
        // A batch norm's running mean and variance are state, not parameters.
        const size_t params = n.kind == graph::OpKind::BatchNormalization ? 3 : n.inputs.size();
        for (size_t i = 1; i < params; ++i) count += static_cast<int64_t>(valueCount(g.initializers.at(n.inputs[i]).dims));
        return count;
    }
    int64_t paramCount(const graph::Node& n) const { return paramCount(g_, n); }

    // Floats a training step keeps per example: the input, and each value a node writes with its
    // gradient where it needs one (a ReLU run inside its producer and a Flatten write none of their own).
    double activationFloatsPerExample() const {
        double floats = valueCount(g_.sample_shape);
        for (const graph::Node& n : g_.nodes) {
            if (n.kind == graph::OpKind::Flatten || n.kind == graph::OpKind::Reshape || (n.kind == graph::OpKind::Relu && fusedInto(n)))
                continue;
            floats += valueCount(shapes_.at(n.output)) * (gradient_.count(n.output) ? 2.0 : 1.0);
        }
        return floats;
    }

private:
    Dims dims(const std::string& value) const {
        Dims d{batch_};
        const Dims& s = shapes_.at(value);
        d.insert(d.end(), s.begin(), s.end());
        return d;
    }
    const graph::Node* producerOf(const std::string& value) const {
        const auto it = producer_.find(value);
        return it == producer_.end() ? nullptr : &g_.nodes[it->second];
    }
    // The node a ReLU runs inside, as the layer stack fuses it: its input's producer, when that is a
    // Conv, Gemm, BatchNormalization or MaxPool without a fused ReLU of its own and this is its only reader.
    const graph::Node* fusedInto(const graph::Node& relu) const {
        if (const graph::Node* pool = poolAfter(relu)) return pool;
        const graph::Node* p = producerOf(relu.inputs[0]);
        return p && fusesRelu(p->kind) && !p->fused_relu && graph::useCount(g_, p->output) == 1 ? p : nullptr;
    }
    // A ReLU whose only reader is a MaxPool runs after the pooling, inside it (the layer stack's
    // layerExecutionOrder: max and ReLU commute exactly, and after pooling ReLU touches a quarter of
    // the data); the MaxPool, when so.
    const graph::Node* poolAfter(const graph::Node& relu) const {
        if (relu.kind != graph::OpKind::Relu || graph::useCount(g_, relu.output) != 1 || graph::useCount(g_, relu.inputs[0]) != 1) return nullptr;
        for (const graph::Node& r : g_.nodes)
            if (r.kind == graph::OpKind::MaxPool && r.inputs[0] == relu.output) return &r;
        return nullptr;
    }
    // Whether a ReLU runs after this node inside it (the graph's flag or a ReLU node it absorbs).
    bool reluAfter(const graph::Node& n) const {
        if (n.fused_relu) return true;
        if (n.kind == graph::OpKind::MaxPool) {
            const graph::Node* p = producerOf(n.inputs[0]);
            if (p && poolAfter(*p) == &n) return true;
        }
        if (!fusesRelu(n.kind) || graph::useCount(g_, n.output) != 1) return false;
        for (const graph::Node& r : g_.nodes)
            if (r.kind == graph::OpKind::Relu && r.inputs[0] == n.output && !poolAfter(r)) return true;
        return false;
    }
    bool needsInputGrad(const graph::Node& n) const { return gradient_.count(n.inputs[0]) > 0; }

    void node(const graph::Node& n, std::vector<OpDesc>& out) const {
        using opcost::Pass;
        const Dims src = dims(n.inputs[0]), dst = dims(n.output);
        const bool relu = reluAfter(n);
        switch (n.kind) {
            case graph::OpKind::Conv: {
                const bool bias = n.inputs.size() == 3;
                const int64_t pixels = batch_ * dst[2] * dst[3], patch = src[1] / n.group * n.kernel * n.kernelW();
                out.emplace_back(opcost::convolution(Pass::Forward, src, dst, n.kernel, bias, relu, n.group, n.kernelW()),
                                 StepPart::Forward, MatrixShape{pixels, dst[1], patch});
                if (!training_) return;
                out.emplace_back(opcost::convolution(Pass::BackwardWeights, src, dst, n.kernel, bias, false, n.group, n.kernelW()),
                                 StepPart::Backward, MatrixShape{dst[1], patch, pixels});
                if (needsInputGrad(n))
                    out.emplace_back(opcost::convolution(Pass::BackwardData, src, dst, n.kernel, bias, false, n.group, n.kernelW()),
                                     StepPart::Backward, MatrixShape{pixels, patch, dst[1]});
                if (n.fused_relu) reluBackward(dst, out);
                return;
            }
            case graph::OpKind::Gemm: {
                const bool bias = n.inputs.size() == 3;
                const int64_t in = static_cast<int64_t>(valueCount(shapes_.at(n.inputs[0]))), units = dst[1];
                out.emplace_back(opcost::innerProduct(Pass::Forward, batch_, in, units, bias, relu), StepPart::Forward,
                                 MatrixShape{batch_, units, in});
                if (!training_) return;
                out.emplace_back(opcost::innerProduct(Pass::BackwardWeights, batch_, in, units, bias, false),
                                 StepPart::Backward, MatrixShape{units, in, batch_});
                if (needsInputGrad(n))
                    out.emplace_back(opcost::innerProduct(Pass::BackwardData, batch_, in, units, bias, false),
                                     StepPart::Backward, MatrixShape{batch_, in, units});
                if (n.fused_relu) reluBackward(dst, out);
                return;
            }
            case graph::OpKind::BatchNormalization:
                out.emplace_back(opcost::batchNorm(training_ ? opcost::NormPass::ForwardTraining
                                                             : opcost::NormPass::ForwardInference,
                                                   src, relu),
                                 StepPart::Forward);
                if (training_) out.emplace_back(opcost::batchNorm(opcost::NormPass::Backward, src, relu), StepPart::Backward);
                return;
            case graph::OpKind::Relu: {
                const graph::Node* into = fusedInto(n);
                if (!into) out.emplace_back(opcost::elementwise("eltwise_relu_forward", src, 2, 1.0), StepPart::Forward);
                // Inside a batch norm its backward is the batch norm's too; after a pooling, on its output.
                if (training_ && !(into && into->kind == graph::OpKind::BatchNormalization))
                    reluBackward(poolAfter(n) ? dims(into->output) : src, out);
                return;
            }
            case graph::OpKind::Clip:
                out.emplace_back(opcost::elementwise("eltwise_clip_forward", src, 2, 2.0), StepPart::Forward);
                if (training_) out.emplace_back(opcost::elementwise("eltwise_clip_backward", src, 3, 1.0), StepPart::Backward);
                return;
            case graph::OpKind::MaxPool:
                out.emplace_back(opcost::maxPooling(true, src, dst, n.kernel, relu, n.kernelW()), StepPart::Forward);
                if (training_ && needsInputGrad(n))
                    out.emplace_back(opcost::maxPooling(false, src, dst, n.kernel, relu, n.kernelW()), StepPart::Backward);
                return;
            case graph::OpKind::GlobalAveragePool:
                out.emplace_back(opcost::globalAvgPooling(true, src), StepPart::Forward);
                if (training_ && needsInputGrad(n)) out.emplace_back(opcost::globalAvgPooling(false, src), StepPart::Backward);
                return;
            case graph::OpKind::Flatten: return;  // a view of its input
            case graph::OpKind::Sigmoid:
            case graph::OpKind::Tanh: {
                // exp and a division per element; the backward reads the output and its gradient.
                const bool sigmoid = n.kind == graph::OpKind::Sigmoid;
                out.emplace_back(opcost::elementwise(sigmoid ? "eltwise_logistic_forward" : "eltwise_tanh_forward", src, 2, 4.0),
                                 StepPart::Forward);
                if (training_ && needsInputGrad(n))
                    out.emplace_back(opcost::elementwise(sigmoid ? "eltwise_logistic_backward" : "eltwise_tanh_backward", src, 3, 3.0),
                                     StepPart::Backward);
                return;
            }
            case graph::OpKind::Softmax:
                // max, exp, sum and a division per element: reads its input twice, writes once.
                out.emplace_back(opcost::elementwise("softmax_forward", src, 3, 4.0), StepPart::Forward);
                if (training_ && needsInputGrad(n)) out.emplace_back(opcost::elementwise("softmax_backward", src, 3, 3.0), StepPart::Backward);
                return;
            case graph::OpKind::AveragePool: {
                // kernel^2 additions per output, as a max pooling's comparisons.
                out.emplace_back(opcost::maxPooling(true, src, dst, n.kernel, false, n.kernelW()), StepPart::Forward);
                out.back().cost.kind = "pooling_avg_forward";
                if (training_ && needsInputGrad(n)) {
                    out.emplace_back(opcost::maxPooling(false, src, dst, n.kernel, false, n.kernelW()), StepPart::Backward);
                    out.back().cost.kind = "pooling_avg_backward";
                }
                return;
            }
            case graph::OpKind::Mul:
            case graph::OpKind::Sub:
            case graph::OpKind::Div: {
                // One op per element over a's size (an initializer b is small, or a value of a's size).
                const bool values = shapes_.count(n.inputs[1]) > 0;
                const char* kinds[] = {"binary_mul", "binary_sub", "binary_div"};
                const int k = n.kind == graph::OpKind::Mul ? 0 : n.kind == graph::OpKind::Sub ? 1 : 2;
                out.emplace_back(opcost::elementwise(kinds[k], dst, values ? 3 : 2, 1.0), StepPart::Forward);
                // The gradients of a and (a value's) b: one op each over the output's gradient.
                if (training_ && needsInputGrad(n)) out.emplace_back(opcost::elementwise(kinds[k], dst, 3, 1.0), StepPart::Backward);
                if (training_ && values && gradient_.count(n.inputs[1]))
                    out.emplace_back(opcost::elementwise(kinds[k], dst, 3, 1.0), StepPart::Backward);
                return;
            }
            case graph::OpKind::Add:
                // Its backward hands the gradient to both inputs as it is; a fused ReLU's is undone first.
                out.emplace_back(opcost::binaryAdd(dst, n.fused_relu), StepPart::Forward);
                if (training_ && n.fused_relu) reluBackward(dst, out);
                // A bias's gradient: the output's summed over everything but the bias's own dims.
                if (training_ && paramCount(n) > 0) out.emplace_back(opcost::elementwise("reduction_sum", dst, 1, 1.0), StepPart::Backward);
                return;
            case graph::OpKind::MatMul: matMul(n, src, dst, out); return;
            case graph::OpKind::Gather:
                // Rows copied out (an embedding's from its table); the backward adds the gradient's rows back.
                out.emplace_back(opcost::elementwise("gather_forward", dst, 2, 0.0), StepPart::Forward);
                if (training_ && (paramCount(n) > 0 || needsInputGrad(n)))
                    out.emplace_back(opcost::elementwise("gather_backward", dst, 3, 1.0), StepPart::Backward);
                return;
            case graph::OpKind::LayerNormalization:
                // Mean and variance per row (a pass), then normalize, scale and shift (a pass reading and writing).
                out.emplace_back(opcost::elementwise("layer_normalization_forward", src, 3, 8.0), StepPart::Forward);
                if (training_) out.emplace_back(opcost::elementwise("layer_normalization_backward", src, 5, 12.0), StepPart::Backward);
                return;
            case graph::OpKind::Reshape: return;  // a view of its input
            case graph::OpKind::Transpose: {
                const auto bytes = static_cast<int64_t>(valueCount(src) * kGraphFloatBytes);
                out.emplace_back(opcost::reorder(src, bytes, bytes), StepPart::Forward);
                if (training_ && needsInputGrad(n)) out.emplace_back(opcost::reorder(dst, bytes, bytes), StepPart::Backward);
                return;
            }
            case graph::OpKind::Erf:
                // A polynomial of a dozen terms per element; the backward an exp and a product.
                out.emplace_back(opcost::elementwise("eltwise_erf_forward", src, 2, 12.0), StepPart::Forward);
                if (training_ && needsInputGrad(n)) out.emplace_back(opcost::elementwise("eltwise_erf_backward", src, 3, 4.0), StepPart::Backward);
                return;
            case graph::OpKind::Concat:
                out.emplace_back(opcost::elementwise("concat", dst, 2, 0.0), StepPart::Forward);
                if (training_ && needsInputGrad(n)) out.emplace_back(opcost::elementwise("concat_backward", dst, 2, 0.0), StepPart::Backward);
                return;
        }
    }
    // a [.., M, K] times an initializer [K, P]: one inner product over all the rows (the same kernels
    // and FLOPs); times a value [.., K, P]: a batch of products, and in training the gradients of both.
    void matMul(const graph::Node& n, const Dims& src, const Dims& dst, std::vector<OpDesc>& out) const {
        using opcost::Pass;
        const int64_t k = src.back(), p = dst.back();
        const auto rows = static_cast<int64_t>(valueCount(src) / static_cast<double>(k));
        if (!shapes_.count(n.inputs[1])) {
            out.emplace_back(opcost::innerProduct(Pass::Forward, rows, k, p, false, false), StepPart::Forward, MatrixShape{rows, p, k});
            if (!training_) return;
            out.emplace_back(opcost::innerProduct(Pass::BackwardWeights, rows, k, p, false, false), StepPart::Backward,
                             MatrixShape{p, k, rows});
            if (needsInputGrad(n))
                out.emplace_back(opcost::innerProduct(Pass::BackwardData, rows, k, p, false, false), StepPart::Backward,
                                 MatrixShape{rows, k, p});
            return;
        }
        const int64_t m = src.size() >= 3 ? src[src.size() - 2] : 1, mats = rows / m;
        const auto cost = [&](const char* kind) {
            prof::OpCost c;
            c.kind = kind;
            c.shape = std::to_string(mats) + " x (" + std::to_string(m) + "x" + std::to_string(k) + " * " + std::to_string(k) + "x" +
                      std::to_string(p) + ")";
            const double b = static_cast<double>(mats), mm = static_cast<double>(m), kk = static_cast<double>(k),
                         pp = static_cast<double>(p);
            c.flops = 2.0 * b * mm * kk * pp;
            c.bytes = kGraphFloatBytes * b * (mm * kk + kk * pp + mm * pp);
            return c;
        };
        out.emplace_back(cost("matmul_forward"), StepPart::Forward, MatrixShape{rows, p, k});
        if (!training_) return;
        if (needsInputGrad(n)) out.emplace_back(cost("matmul_backward_data"), StepPart::Backward, MatrixShape{rows, k, p});
        if (gradient_.count(n.inputs[1])) out.emplace_back(cost("matmul_backward_data"), StepPart::Backward, MatrixShape{mats * k, p, m});
    }
    void reluBackward(const Dims& d, std::vector<OpDesc>& out) const {
        out.emplace_back(opcost::elementwise("eltwise_relu_backward", d, 3, 1.0), StepPart::Backward);
    }

    const graph::Graph& g_;
    int64_t batch_;
    bool training_;
    std::map<std::string, Dims> shapes_;
    std::map<std::string, size_t> producer_;
    std::set<std::string> gradient_;
};

OpGraph describeGraph(const graph::Graph& g, int64_t batch, const OptimizerConfig* optimizer) {
    GraphDescriber d(g, batch, optimizer != nullptr);
    OpGraph out;
    out.batch = batch;
    std::vector<std::vector<OpDesc>> backward;
    d.describe(out.ops, backward);
    for (const graph::Node& n : g.nodes) out.param_count += GraphDescriber::paramCount(g, n);
    const double params = static_cast<double>(out.param_count);
    out.params_bytes = params * kGraphFloatBytes;
    if (!optimizer) {
        double floats = valueCount(g.sample_shape);
        for (const auto& [name, shape] : g.valueShapes())
            if (name != g.input) floats += valueCount(shape);
        out.activation_bytes = static_cast<double>(batch) * floats * kGraphFloatBytes;
        return out;
    }
    const auto update = Optimizer::create(*optimizer, 1);  // for its cost per parameter only
    for (size_t i = g.nodes.size(); i-- > 0;) {
        for (auto it = backward[i].rbegin(); it != backward[i].rend(); ++it) out.ops.push_back(*it);
        if (const int64_t p = GraphDescriber::paramCount(g, g.nodes[i]); p > 0) {
            out.layer_params.push_back(p);
            OpDesc op(opcost::optimizerUpdate(update->updateKind(), p, update->flopsPerParam(), update->bytesPerParam()),
                      StepPart::Optimizer);
            op.layer = g.nodes[i].name;
            out.ops.push_back(std::move(op));
        }
    }
    out.grads_bytes = params * kGraphFloatBytes;
    out.optimizer_bytes = params * optimizerStateFloatsPerParam(*optimizer) * kGraphFloatBytes;
    out.activation_bytes = static_cast<double>(batch) * d.activationFloatsPerExample() * kGraphFloatBytes;
    return out;
}

}  // namespace

OpGraph trainingOpGraph(const graph::Graph& g, int64_t batch, const OptimizerConfig& optimizer) {
    return describeGraph(g, batch, &optimizer);
}

OpGraph inferenceOpGraph(const graph::Graph& g, int64_t batch) { return describeGraph(g, batch, nullptr); }

}  // namespace trainbench::engine
