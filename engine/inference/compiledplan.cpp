#include "engine/inference/compiledplan.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "engine/graph/graphpasses.h"
#include "engine/graph/nodeshape.h"
#include "engine/layers/layer.h"
#include "engine/util/parallelfor.inl"

namespace trainbench::engine::inference {

using dnnl::memory;
using dnnl::prop_kind;
using graph::Node;
using graph::OpKind;

namespace {

memory::desc anyDesc(const Dims& dims) { return memory::desc(dims, memory::data_type::f32, memory::format_tag::any); }

int64_t shapeProduct(const Dims& d) {
    int64_t n = 1;
    for (int64_t v : d) n *= v;
    return n;
}

// Builds the steps of one stage: each value's memory in the layout its producer chose, a reorder in
// front of a primitive only where it wants another.
class Builder {
public:
    Builder(const graph::Graph& g, const std::map<std::string, Dims>& shapes, CompiledStage& stage,
            CompiledPlan& plan, const dnnl::engine& eng, WeightCache& weights)
        : g_(g), shapes_(shapes), n_(stage.batch), eng_(eng), weights_(weights), stage_(stage), plan_(plan) {}

    // The graph's input as the stage's input (plain), scaled by a first step when asked.
    void startAtInput(bool scaleInput) {
        stage_.input = memory(Tensor::plainDesc(batchDims(g_.sample_shape)), eng_, DNNL_MEMORY_NONE);
        values_[g_.input] = stage_.input;
        if (!scaleInput) return;
        const memory& dst = buffer(stage_.input.get_desc());
        dnnl::eltwise_forward::primitive_desc pd({prop_kind::forward_inference, dnnl::algorithm::eltwise_linear,
                                                  stage_.input.get_desc(), g_.metadata.input_scale,
                                                  g_.metadata.input_shift},
                                                 eng_);
        step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, stage_.input}, {DNNL_ARG_DST, dst}});
        values_[g_.input] = dst;
    }
    // `value` as the stage's input, held in `held`.
    void startAt(const std::string& value, const memory& held) {
        stage_.input = held;
        values_[value] = held;
    }
    // Nodes [begin, end) in order, but for what runs fused: a MatMul by weights takes the bias Add
    // after it, and the exact GELU after that (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5, PyTorch's
    // export of gelu), as oneDNN's bias and eltwise_gelu_erf post-op; a GELU after anything else is one
    // eltwise_gelu_erf. The reference evaluator runs them node by node.
    void compileNodes(size_t begin, size_t end) {
        std::set<size_t> fused;
        for (size_t i = begin; i < end; ++i) {
            if (fused.count(i)) continue;
            const Node& node = g_.nodes[i];
            if (node.kind == OpKind::MatMul && !values_.count(node.inputs[1])) {
                MatMulFusion f{i, 0, {}, node.output};
                if (const std::optional<size_t> add = biasAddAfter(i, end)) {
                    f.bias = *add;
                    f.output = g_.nodes[*add].output;
                    if (std::optional<std::vector<size_t>> gelu = geluOf(f.output, end)) {
                        f.gelu = *gelu;
                        f.output = g_.nodes[gelu->back()].output;
                    }
                }
                values_[f.output] = matMul(node, values_.at(node.inputs[0]), batchDims(shapes_.at(f.output)), &f);
                if (f.bias) fused.insert(f.bias);
                fused.insert(f.gelu.begin(), f.gelu.end());
                continue;
            }
            if (const std::optional<std::vector<size_t>> gelu = node.kind == OpKind::Div ? geluOf(node.inputs[0], end) : std::nullopt;
                gelu && gelu->front() == i) {
                const memory src = plain(values_.at(node.inputs[0]));
                dnnl::eltwise_forward::primitive_desc pd(
                    {prop_kind::forward_inference, dnnl::algorithm::eltwise_gelu_erf, src.get_desc(), 0.0f, 0.0f}, eng_);
                const memory& dst = buffer(pd.dst_desc());
                step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
                values_[g_.nodes[gelu->back()].output] = dst;
                fused.insert(gelu->begin(), gelu->end());
                continue;
            }
            values_[node.output] = compile(node);
        }
    }
    // The stage's output: `value` in layout `wanted`, in a memory the caller points before each run.
    // The last primitive writes it there itself when it writes that value in that layout; otherwise a
    // reorder copies it there.
    void finishAt(const std::string& value, const memory::desc& wanted) {
        const memory& held = values_.at(value);
        auto plain = [](const memory::desc& d) { return d == Tensor::plainDesc(d.dims()); };
        CompiledStep* last = stage_.steps.empty() ? nullptr : &stage_.steps.back();
        if (last && graph::useCount(g_, value) == 1 && last->args.count(DNNL_ARG_DST)) {
            memory& dst = last->args.at(DNNL_ARG_DST);
            const memory::desc d = dst.get_desc();
            // Plain [n, C, 1, 1] and plain [n, C] (a Flatten's view) are the same bytes.
            const bool fits = d == wanted || (plain(d) && plain(wanted) && d.get_size() == wanted.get_size());
            if (fits && dst.get_data_handle() == held.get_data_handle()) {
                stage_.output = memory(d, eng_, DNNL_MEMORY_NONE);
                dst = stage_.output;
                return;
            }
        }
        stage_.output = memory(wanted, eng_, DNNL_MEMORY_NONE);
        memory from = held;
        if (held.get_desc().dims() != wanted.dims())
            from = view(as(held, Tensor::plainDesc(held.get_desc().dims())), Tensor::plainDesc(wanted.dims()));
        step(dnnl::reorder(from, stage_.output), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, stage_.output}});
    }
    const memory& value(const std::string& name) const { return values_.at(name); }

private:
    Dims batchDims(const Dims& sample) const {
        Dims d{n_};
        d.insert(d.end(), sample.begin(), sample.end());
        return d;
    }
    const memory& buffer(const memory::desc& md) {
        plan_.buffers.push_back(std::make_unique<Tensor>(md, eng_));
        return plan_.buffers.back()->mem();
    }
    void step(dnnl::primitive p, std::unordered_map<int, memory> args) {
        stage_.steps.push_back({std::move(p), std::move(args), {}});
    }
    // m's bytes under another descriptor. A view of the stage's input, whose storage is given at
    // each run, is pointed with it.
    memory view(const memory& m, const memory::desc& d) {
        memory v(d, eng_, m.get_data_handle());
        bool input = m.get() == stage_.input.get();
        for (const memory& other : stage_.inputViews) input = input || m.get() == other.get();
        if (input) stage_.inputViews.push_back(v);
        return v;
    }
    // The value in layout `wanted`, reordered into a new buffer when it is held in another.
    memory as(const memory& value, const memory::desc& wanted) {
        if (value.get_desc() == wanted) return value;
        const memory& dst = buffer(wanted);
        step(dnnl::reorder(value, dst), {{DNNL_ARG_FROM, value}, {DNNL_ARG_TO, dst}});
        return dst;
    }

    memory compile(const Node& node) {
        const memory& x = values_.at(node.inputs[0]);
        const Dims out = batchDims(shapes_.at(node.output));
        switch (node.kind) {
            case OpKind::Conv: return conv(node, x, out);
            case OpKind::Gemm: return gemm(node, x, out);
            case OpKind::BatchNormalization: {
                auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                             dnnl::normalization_flags::use_shift;
                if (node.fused_relu) flags |= dnnl::normalization_flags::fuse_norm_relu;
                dnnl::batch_normalization_forward::primitive_desc pd(
                    {prop_kind::forward_inference, x.get_desc(), node.epsilon, flags}, eng_);
                const memory& dst = buffer(pd.dst_desc());
                const memory::desc c = Tensor::plainDesc({out[1]});
                step(dnnl::batch_normalization_forward(pd),
                     {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCALE, weights_.get(node.inputs[1], c)},
                      {DNNL_ARG_SHIFT, weights_.get(node.inputs[2], c)}, {DNNL_ARG_MEAN, weights_.get(node.inputs[3], c)},
                      {DNNL_ARG_VARIANCE, weights_.get(node.inputs[4], c)}});
                return dst;
            }
            case OpKind::Relu:
            case OpKind::Clip: {
                const bool relu = node.kind == OpKind::Relu;
                dnnl::eltwise_forward::primitive_desc pd(
                    {prop_kind::forward_inference, relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_clip,
                     x.get_desc(), relu ? 0.0f : node.clip_min, relu ? 0.0f : node.clip_max},
                    eng_);
                const memory& dst = buffer(pd.dst_desc());
                step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
                return dst;
            }
            case OpKind::Sigmoid:
            case OpKind::Tanh: {
                dnnl::eltwise_forward::primitive_desc pd(
                    {prop_kind::forward_inference,
                     node.kind == OpKind::Sigmoid ? dnnl::algorithm::eltwise_logistic : dnnl::algorithm::eltwise_tanh,
                     x.get_desc(), 0.0f, 0.0f},
                    eng_);
                const memory& dst = buffer(pd.dst_desc());
                step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
                return dst;
            }
            case OpKind::Softmax: {
                // Over the last axis.
                const memory src = as(x, Tensor::plainDesc(x.get_desc().dims()));
                dnnl::softmax_forward::primitive_desc pd(
                    {prop_kind::forward_inference, src.get_desc(), static_cast<int>(out.size()) - 1}, eng_);
                const memory& dst = buffer(pd.dst_desc());
                step(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
                return dst;
            }
            case OpKind::MaxPool:
            case OpKind::AveragePool:
            case OpKind::GlobalAveragePool: return pool(node, x, out);
            case OpKind::Flatten: return flatten(node, x, out);
            case OpKind::Add:
            case OpKind::Mul:
            case OpKind::Sub:
            case OpKind::Div: return binary(node, x);
            case OpKind::MatMul: return matMul(node, x, out);  // batched (compileNodes fuses the others)
            case OpKind::LayerNormalization: return layerNorm(node, x, out);
            case OpKind::Reshape: return view(as(x, Tensor::plainDesc(x.get_desc().dims())), Tensor::plainDesc(out));
            case OpKind::Transpose: return transpose(node, x, out);
            case OpKind::Concat: return concat(node, out);
            case OpKind::Erf: return erf(x);
            case OpKind::Gather: return node.inputs.size() == 2 ? embedding(node, x, out) : take(node, x, out);
        }
        throw graph::GraphError("node '" + node.name + "': unknown op kind");
    }

    memory conv(const Node& node, const memory& x, const Dims& out) {
        // Grouped (depthwise): oneDNN's weights are [group, filters / group, channels / group, kh, kw],
        // the same bytes as the graph's [filters, channels / group, kh, kw].
        Dims wDims = g_.initializers.at(node.inputs[1]).dims;
        if (node.group > 1) {
            wDims[0] /= node.group;
            wDims.insert(wDims.begin(), node.group);
        }
        const memory::dims stride{node.stride, node.strideW()}, padL{node.pad, node.padLeft()},
            padR{node.padBottom(), node.padRight()}, dilates{node.dilation - 1, node.dilationW() - 1};
        const memory::desc biasMd = node.inputs.size() == 3 ? anyDesc({out[1]}) : memory::desc();
        // Everything "any": the kernel picks its layouts; the input is reordered to it if need be
        // (the first convolution's plain input usually stays plain).
        dnnl::convolution_forward::primitive_desc pd(
            {prop_kind::forward_inference, dnnl::algorithm::convolution_direct, anyDesc(x.get_desc().dims()),
             anyDesc(wDims), biasMd, anyDesc(out), stride, dilates, padL, padR},
            inferenceAttr(node.fused_relu), eng_);
        return weighted<dnnl::convolution_forward>(node, node.inputs[1], x, pd);
    }

    // A convolution's or inner product's step: the input in the layout it wants, the weights in
    // theirs (reordered once, WeightCache), a new buffer for the output.
    template <typename Primitive>
    memory weighted(const Node& node, const std::string& weight, const memory& x,
                    const typename Primitive::primitive_desc& pd) {
        const memory src = as(x, pd.src_desc());
        const memory& dst = buffer(pd.dst_desc());
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_.get(weight, pd.weights_desc())}, {DNNL_ARG_DST, dst}};
        if (node.inputs.size() == 3) args[DNNL_ARG_BIAS] = weights_.get(node.inputs[2], pd.bias_desc());
        if (pd.scratchpad_desc().get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = buffer(pd.scratchpad_desc());
        step(Primitive(pd), std::move(args));
        return dst;
    }
    // Fused ReLU, and the scratchpad from the plan (scratchpad_mode::user): in oneDNN's default
    // (library) mode a primitive's scratchpad belongs to the thread that created it, and a served
    // model's instance runs on whichever batch thread takes it (int8's convolutions failed so).
    static dnnl::primitive_attr inferenceAttr(bool relu) {
        dnnl::primitive_attr attr = reluAttr(relu);
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        return attr;
    }

    memory gemm(const Node& node, const memory& x, const Dims& out) {
        // The input as it is held. Examples one after the other without padding (plain, nhwc,
        // nChw16c with whole blocks) are read as a plain [n, features] matrix, the weights' rows
        // permuted once to the same order: the matrix kernels (brgemm) are 2-3x faster than the
        // inner product's [n, C, H, W] path. Otherwise the input is read as [n, C, H, W] directly.
        memory in = x;
        std::string weight = node.inputs[1];
        const memory::desc held = x.get_desc();
        const int64_t features = shapeProduct(held.dims()) / n_;
        if (held.dims().size() > 2 && Tensor::batchOutermost(held) &&
            held.get_size() == static_cast<size_t>(n_ * features) * sizeof(float)) {
            if (held != Tensor::plainDesc(held.dims())) weight = weights_.matchingInput(weight, held);
            in = view(x, Tensor::plainDesc({n_, features}));
        }
        const memory::desc src = in.get_desc();
        Dims wDims = src.dims();
        wDims[0] = out[1];
        dnnl::inner_product_forward::primitive_desc pd =
            node.inputs.size() == 3
                ? dnnl::inner_product_forward::primitive_desc(
                      {prop_kind::forward_inference, src, anyDesc(wDims), anyDesc({out[1]}), anyDesc(out)},
                      inferenceAttr(node.fused_relu), eng_)
                : dnnl::inner_product_forward::primitive_desc(
                      {prop_kind::forward_inference, src, anyDesc(wDims), anyDesc(out)}, inferenceAttr(node.fused_relu), eng_);
        return weighted<dnnl::inner_product_forward>(node, weight, in, pd);
    }

    // a (op) b: b a value (in a's layout) or an initializer broadcast against a (both plain then).
    memory binary(const Node& node, const memory& x) {
        const dnnl::algorithm algorithm = node.kind == OpKind::Add   ? dnnl::algorithm::binary_add
                                          : node.kind == OpKind::Mul ? dnnl::algorithm::binary_mul
                                          : node.kind == OpKind::Sub ? dnnl::algorithm::binary_sub
                                                                     : dnnl::algorithm::binary_div;
        memory a = x, b;
        if (const auto v = values_.find(node.inputs[1]); v != values_.end()) {
            b = as(v->second, x.get_desc());
        } else {
            a = as(x, Tensor::plainDesc(x.get_desc().dims()));
            const Dims& sample = shapes_.at(node.inputs[0]);
            Dims bd{1};
            const Dims per = *graph::broadcastDims(sample, g_.initializers.at(node.inputs[1]).dims);
            bd.insert(bd.end(), per.begin(), per.end());
            b = weights_.get(node.inputs[1], Tensor::plainDesc(bd));
        }
        dnnl::binary::primitive_desc pd({algorithm, a.get_desc(), b.get_desc(), a.get_desc()},
                                        inferenceAttr(node.fused_relu), eng_);
        const memory& dst = buffer(pd.dst_desc());
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, dst}};
        if (pd.scratchpad_desc().get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = buffer(pd.scratchpad_desc());
        step(dnnl::binary(pd), std::move(args));
        return dst;
    }

    memory plain(const memory& x) { return as(x, Tensor::plainDesc(x.get_desc().dims())); }
    static Dims collapsed(const Dims& d, size_t keep) {  // the leading dims as one: [prod(d[0..]), last `keep`]
        Dims c{1};
        for (size_t i = 0; i + keep < d.size(); ++i) c[0] *= d[i];
        c.insert(c.end(), d.end() - static_cast<std::ptrdiff_t>(keep), d.end());
        return c;
    }

    // a [n, ..., M, K] times b: an initializer [K, P], as one [rows, K] x [K, P] product; or a value
    // [n, ..., K, P], as a batch of [M, K] x [K, P] products.
    // A MatMul and what runs inside it: the index of its bias Add (0: none) and of the GELU's nodes,
    // and the value the last of them writes.
    struct MatMulFusion {
        size_t matmul = 0, bias = 0;
        std::vector<size_t> gelu;
        std::string output;
    };
    // The node in [from, end) that is the only reader of `value`, when it is one.
    std::optional<size_t> onlyReader(const std::string& value, size_t from, size_t end) const {
        if (graph::useCount(g_, value) != 1 || value == g_.output) return std::nullopt;
        for (size_t j = from; j < end; ++j)
            for (const std::string& in : g_.nodes[j].inputs)
                if (in == value) return j;
        return std::nullopt;
    }
    bool scalarInitializer(const std::string& name, float want) const {
        const auto it = g_.initializers.find(name);
        return it != g_.initializers.end() && it->second.values.size() == 1 && std::fabs(it->second.values[0] - want) <= 1e-6f * std::fabs(want);
    }
    // The Add of a [P] bias that alone reads MatMul i's output (before `end`).
    std::optional<size_t> biasAddAfter(size_t i, size_t end) const {
        const Node& mm = g_.nodes[i];
        const std::optional<size_t> j = onlyReader(mm.output, i + 1, end);
        if (!j) return std::nullopt;
        const Node& add = g_.nodes[*j];
        if (add.kind != OpKind::Add || add.fused_relu || add.inputs.size() != 2 || add.inputs[0] != mm.output) return std::nullopt;
        const auto bias = g_.initializers.find(add.inputs[1]);
        const int64_t units = shapes_.at(mm.output).back();
        if (bias == g_.initializers.end() || static_cast<int64_t>(bias->second.values.size()) != units ||
            bias->second.dims.empty() || bias->second.dims.back() != units)
            return std::nullopt;
        return j;
    }
    // PyTorch's exact GELU of `x`: Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x, .) -> Mul(0.5), x read by
    // nothing else; the five nodes' indices.
    std::optional<std::vector<size_t>> geluOf(const std::string& x, size_t end) const {
        if (graph::useCount(g_, x) != 2 || x == g_.output) return std::nullopt;
        size_t div = g_.nodes.size();
        for (size_t j = 0; j < end; ++j)
            if (g_.nodes[j].kind == OpKind::Div && g_.nodes[j].inputs.size() == 2 && g_.nodes[j].inputs[0] == x) div = j;
        if (div == g_.nodes.size() || !scalarInitializer(g_.nodes[div].inputs[1], std::sqrt(2.0f))) return std::nullopt;
        std::vector<size_t> at{div};
        const auto next = [&](OpKind kind) -> bool {
            const std::optional<size_t> j = onlyReader(g_.nodes[at.back()].output, at.back() + 1, end);
            if (!j || g_.nodes[*j].kind != kind || g_.nodes[*j].fused_relu) return false;
            at.push_back(*j);
            return true;
        };
        if (!next(OpKind::Erf) || !next(OpKind::Add) || !scalarInitializer(g_.nodes[at.back()].inputs[1], 1.0f)) return std::nullopt;
        const std::string sum = g_.nodes[at.back()].output;
        if (!next(OpKind::Mul)) return std::nullopt;
        const Node& times = g_.nodes[at.back()];
        if (!((times.inputs[0] == x && times.inputs[1] == sum) || (times.inputs[0] == sum && times.inputs[1] == x))) return std::nullopt;
        if (!next(OpKind::Mul) || !scalarInitializer(g_.nodes[at.back()].inputs[1], 0.5f)) return std::nullopt;
        return at;
    }

    memory matMul(const Node& node, const memory& x, const Dims& out, const MatMulFusion* fusion = nullptr) {
        const memory a = plain(x);
        const Dims ad = a.get_desc().dims();
        const auto b = values_.find(node.inputs[1]);
        const bool batched = b != values_.end();
        const memory src = view(a, Tensor::plainDesc(collapsed(ad, batched ? 2 : 1)));
        const memory::desc dst = Tensor::plainDesc(collapsed(out, batched ? 2 : 1));
        memory weightsMem;
        memory::desc weightsMd;
        if (batched) {
            weightsMem = view(plain(b->second), Tensor::plainDesc(collapsed(b->second.get_desc().dims(), 2)));
            weightsMd = weightsMem.get_desc();
        } else {
            weightsMd = anyDesc(g_.initializers.at(node.inputs[1]).dims);
        }
        dnnl::primitive_attr attr = inferenceAttr(false);
        if (fusion && !fusion->gelu.empty()) {
            dnnl::post_ops ops;
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
            attr.set_post_ops(ops);
        }
        const bool bias = fusion && fusion->bias;
        const memory::desc biasMd = bias ? Tensor::plainDesc({1, out.back()}) : memory::desc();
        dnnl::matmul::primitive_desc pd({src.get_desc(), weightsMd, biasMd, dst}, attr, eng_);
        if (!batched) weightsMem = weights_.get(node.inputs[1], pd.weights_desc());
        const memory& y = buffer(pd.dst_desc());
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weightsMem}, {DNNL_ARG_DST, y}};
        if (bias) args[DNNL_ARG_BIAS] = weights_.get(g_.nodes[fusion->bias].inputs[1], biasMd);
        if (pd.scratchpad_desc().get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = buffer(pd.scratchpad_desc());
        step(dnnl::matmul(pd), std::move(args));
        return view(y, Tensor::plainDesc(out));
    }

    // Over the last axis, each row of [rows, D] normalized, scaled and shifted.
    memory layerNorm(const Node& node, const memory& x, const Dims& out) {
        const memory src = view(plain(x), Tensor::plainDesc(collapsed(out, 1)));
        dnnl::layer_normalization_forward::primitive_desc pd(
            {prop_kind::forward_inference, src.get_desc(), node.epsilon,
             dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift},
            inferenceAttr(false), eng_);
        const memory& y = buffer(pd.dst_desc());
        const memory::desc d = Tensor::plainDesc({out.back()});
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                             {DNNL_ARG_DST, y},
                                             {DNNL_ARG_SCALE, weights_.get(node.inputs[1], d)},
                                             {DNNL_ARG_SHIFT, weights_.get(node.inputs[2], d)}};
        if (pd.mean_desc().get_size() > 0) args[DNNL_ARG_MEAN] = buffer(pd.mean_desc());
        if (pd.variance_desc().get_size() > 0) args[DNNL_ARG_VARIANCE] = buffer(pd.variance_desc());
        if (pd.scratchpad_desc().get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = buffer(pd.scratchpad_desc());
        step(dnnl::layer_normalization_forward(pd), std::move(args));
        return view(y, Tensor::plainDesc(out));
    }

    // A reorder reading the input through strides permuted as the output's axes are.
    memory transpose(const Node& node, const memory& x, const Dims& out) {
        const memory src = plain(x);
        const Dims in = src.get_desc().dims();
        Dims inStrides(in.size(), 1), strides(in.size());
        for (size_t d = in.size() - 1; d-- > 0;) inStrides[d] = inStrides[d + 1] * in[d + 1];
        for (size_t d = 0; d < in.size(); ++d) strides[d] = inStrides[static_cast<size_t>(node.ints[d])];
        const memory permuted = view(src, memory::desc(out, memory::data_type::f32, strides));
        const memory& y = buffer(Tensor::plainDesc(out));
        step(dnnl::reorder(permuted, y), {{DNNL_ARG_FROM, permuted}, {DNNL_ARG_TO, y}});
        return y;
    }

    memory concat(const Node& node, const Dims& out) {
        std::vector<memory::desc> descs;
        std::unordered_map<int, memory> args;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            const memory src = plain(values_.at(node.inputs[i]));
            descs.push_back(src.get_desc());
            args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = src;
        }
        dnnl::concat::primitive_desc pd(Tensor::plainDesc(out), static_cast<int>(node.axis), descs, eng_);
        const memory& y = buffer(pd.dst_desc());
        args[DNNL_ARG_DST] = y;
        step(dnnl::concat(pd), std::move(args));
        return y;
    }

    // erf, element by element (oneDNN has GELU's, not erf alone).
    memory erf(const memory& x) {
        const memory src = plain(x);
        const memory y = buffer(src.get_desc());
        const size_t count = src.get_desc().get_size() / sizeof(float);
        host([src, y, count] {
            const auto* in = static_cast<const float*>(src.get_data_handle());
            auto* o = static_cast<float*>(y.get_data_handle());
            kernels::parallelFor(count, 4096, [&](size_t b, size_t e) {
                for (size_t i = b; i < e; ++i) o[i] = std::erf(in[i]);
            });
        });
        return y;
    }

    // Rows of the table for integer ids; an id that is not a row is an error naming the node.
    memory embedding(const Node& node, const memory& x, const Dims& out) {
        const memory ids = plain(x);
        const Dims& tableDims = g_.initializers.at(node.inputs[1]).dims;
        const memory table = weights_.get(node.inputs[1], Tensor::plainDesc(collapsed(tableDims, tableDims.size() - 1)));
        const memory y = buffer(Tensor::plainDesc(out));
        const int64_t rows = tableDims[0];
        const auto width = static_cast<size_t>(shapeProduct(tableDims) / rows);
        const size_t count = ids.get_desc().get_size() / sizeof(float);
        host([ids, table, y, rows, width, count, name = node.name, tableName = node.inputs[1]] {
            const auto* id = static_cast<const float*>(ids.get_data_handle());
            const auto* t = static_cast<const float*>(table.get_data_handle());
            auto* o = static_cast<float*>(y.get_data_handle());
            for (size_t i = 0; i < count; ++i)
                if (!(id[i] == std::floor(id[i]) && id[i] >= float(-rows) && id[i] < float(rows)))
                    throw graph::GraphError("node '" + name + "' (Gather): id " + std::to_string(id[i]) + " at input position " +
                                            std::to_string(i) + " is not a row of the " + std::to_string(rows) + "-row table '" +
                                            tableName + "'");
            kernels::parallelFor(count, 16, [&](size_t b, size_t e) {
                for (size_t i = b; i < e; ++i) {
                    const auto row = static_cast<int64_t>(id[i]) + (id[i] < 0 ? rows : 0);
                    std::copy_n(t + static_cast<size_t>(row) * width, width, o + i * width);
                }
            });
        });
        return y;
    }

    // A value's slices at constant indices along an axis (x[:, 0]).
    memory take(const Node& node, const memory& x, const Dims& out) {
        const memory src = plain(x);
        const Dims in = src.get_desc().dims();
        const auto axis = static_cast<size_t>(node.axis);
        int64_t outer = 1, inner = 1;
        for (size_t d = 0; d < axis; ++d) outer *= in[d];
        for (size_t d = axis + 1; d < in.size(); ++d) inner *= in[d];
        std::vector<int64_t> at;
        for (int64_t i : node.ints) at.push_back(i < 0 ? i + in[axis] : i);
        const memory y = buffer(Tensor::plainDesc(out));
        host([src, y, outer, inner, extent = in[axis], at] {
            const auto* s = static_cast<const float*>(src.get_data_handle());
            auto* o = static_cast<float*>(y.get_data_handle());
            for (int64_t b = 0; b < outer; ++b)
                for (size_t k = 0; k < at.size(); ++k)
                    std::copy_n(s + (b * extent + at[k]) * inner, inner, o + (b * static_cast<int64_t>(at.size()) + static_cast<int64_t>(k)) * inner);
        });
        return y;
    }

    void host(std::function<void()> fn) { stage_.steps.push_back({dnnl::primitive(), {}, std::move(fn)}); }

    memory pool(const Node& node, const memory& x, const Dims& out) {
        const Dims in = x.get_desc().dims();
        const bool global = node.kind == OpKind::GlobalAveragePool;
        const dnnl::algorithm algorithm =
            node.kind == OpKind::MaxPool ? dnnl::algorithm::pooling_max
            : (node.kind == OpKind::AveragePool && node.count_include_pad) ? dnnl::algorithm::pooling_avg_include_padding
                                                                             : dnnl::algorithm::pooling_avg_exclude_padding;
        const memory::dims kernel = global ? memory::dims{in[2], in[3]} : memory::dims{node.kernel, node.kernelW()};
        const memory::dims stride = global ? kernel : memory::dims{node.stride, node.strideW()};
        const memory::dims padL = global ? memory::dims{0, 0} : memory::dims{node.pad, node.padLeft()};
        const memory::dims padR = global ? memory::dims{0, 0} : memory::dims{node.padBottom(), node.padRight()};
        dnnl::pooling_forward::primitive_desc pd(
            {prop_kind::forward_inference, algorithm, x.get_desc(), anyDesc(out), stride, kernel, padL, padR},
            eng_);
        const memory& dst = buffer(pd.dst_desc());
        step(dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
        return dst;
    }

    // A Flatten whose readers are all Gemms passes its input on as it is held (see gemm()); for
    // anything else the values are made plain, where [n, C, H, W] and [n, C*H*W] are the same bytes.
    memory flatten(const Node& node, const memory& x, const Dims& out) {
        bool onlyGemms = node.output != g_.output;
        for (const Node& reader : g_.nodes)
            for (size_t i = 0; i < reader.inputs.size(); ++i)
                if (reader.inputs[i] == node.output && (reader.kind != OpKind::Gemm || i != 0)) onlyGemms = false;
        if (onlyGemms) return x;
        const memory plain = as(x, Tensor::plainDesc(x.get_desc().dims()));
        return view(plain, Tensor::plainDesc(out));
    }

    const graph::Graph& g_;
    const std::map<std::string, Dims>& shapes_;
    int64_t n_;
    const dnnl::engine& eng_;
    WeightCache& weights_;
    CompiledStage& stage_;
    CompiledPlan& plan_;
    std::map<std::string, memory> values_;
};

// The end of the prefix a plan may run in chunks: the last node before the first Gemm (or Flatten
// feeding one), provided only its output is read after it (a residual branch must not cross the
// cut). -1 when there is none.
int prefixEnd(const graph::Graph& g) {
    int end = -1;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (g.nodes[i].kind == OpKind::Gemm || g.nodes[i].kind == OpKind::Flatten) break;
        end = static_cast<int>(i);
    }
    if (end < 0 || static_cast<size_t>(end) + 1 >= g.nodes.size()) return -1;
    std::set<std::string> inside{g.input};
    for (int i = 0; i < end; ++i) inside.insert(g.nodes[static_cast<size_t>(i)].output);
    for (size_t i = static_cast<size_t>(end) + 1; i < g.nodes.size(); ++i)
        for (const std::string& in : g.nodes[i].inputs)
            if (inside.count(in)) return -1;
    return g.nodes[static_cast<size_t>(end)].output == g.output ? -1 : end;
}

}  // namespace

std::unique_ptr<CompiledPlan> buildPlan(const graph::Graph& g, const std::map<std::string, Dims>& shapes, int64_t n,
                                        int64_t chunk, bool scaleInput, const dnnl::engine& engine, WeightCache& weights) {
    auto plan = std::make_unique<CompiledPlan>();
    plan->batch = n;
    plan->main.batch = n;
    const memory::desc logits = Tensor::plainDesc({n, g.classes});
    const int end = prefixEnd(g);
    if (chunk <= 0 || n <= chunk || end < 0) {
        Builder b(g, shapes, plan->main, *plan, engine, weights);
        b.startAtInput(scaleInput);
        b.compileNodes(0, g.nodes.size());
        b.finishAt(g.output, logits);
        return plan;
    }
    plan->chunk = chunk;
    const std::string& cut = g.nodes[static_cast<size_t>(end)].output;
    plan->prefix.resize(n % chunk ? 2 : 1);
    for (size_t k = 0; k < plan->prefix.size(); ++k) {
        CompiledStage& stage = plan->prefix[k];
        stage.batch = k == 0 ? chunk : n % chunk;
        Builder b(g, shapes, stage, *plan, engine, weights);
        b.startAtInput(scaleInput);
        b.compileNodes(0, static_cast<size_t>(end) + 1);
        // Written in the layout its producer chose, which must hold examples one after the other.
        memory::desc held = b.value(cut).get_desc();
        if (!Tensor::batchOutermost(held)) held = Tensor::plainDesc(held.dims());
        b.finishAt(cut, k == 0 ? held : Tensor::withBatch(plan->prefix[0].output.get_desc(), stage.batch));
    }
    const memory::desc whole = Tensor::withBatch(plan->prefix[0].output.get_desc(), n);
    plan->prefixBytesPerExample = plan->prefix[0].output.get_desc().get_size() / static_cast<size_t>(chunk);
    plan->buffers.push_back(std::make_unique<Tensor>(whole, engine));
    Builder b(g, shapes, plan->main, *plan, engine, weights);
    b.startAt(cut, plan->buffers.back()->mem());
    b.compileNodes(static_cast<size_t>(end) + 1, g.nodes.size());
    b.finishAt(g.output, logits);
    return plan;
}

namespace {
void pointInput(CompiledStage& s, void* at) {
    s.input.set_data_handle(at);
    for (dnnl::memory& v : s.inputViews) v.set_data_handle(at);
}
}  // namespace

void runPlan(CompiledPlan& p, const float* x, float* logits, dnnl::stream& stream) {
    auto run = [&](CompiledStage& s) {
        for (CompiledStep& step : s.steps) runStep(step, stream);
    };
    // oneDNN only reads the input; its memory objects take a non-const handle.
    float* in = const_cast<float*>(x);
    if (p.chunk > 0) {
        const size_t perExample = static_cast<size_t>(p.prefix[0].input.get_desc().get_size() / static_cast<size_t>(p.chunk));
        char* out = static_cast<char*>(p.main.input.get_data_handle());
        for (int64_t at = 0; at < p.batch; at += p.chunk) {
            CompiledStage& s = p.prefix[p.batch - at >= p.chunk ? 0 : 1];
            pointInput(s, reinterpret_cast<char*>(in) + static_cast<size_t>(at) * perExample);
            s.output.set_data_handle(out + static_cast<size_t>(at) * p.prefixBytesPerExample);
            run(s);
        }
    } else {
        pointInput(p.main, in);
    }
    p.main.output.set_data_handle(logits);
    run(p.main);
    stream.wait();
}

}  // namespace trainbench::engine::inference
