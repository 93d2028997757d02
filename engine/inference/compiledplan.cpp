#include "engine/inference/compiledplan.h"

#include <set>

#include "engine/graph/graphpasses.h"
#include "engine/layers/layer.h"

namespace trainbench::engine::inference {

using dnnl::memory;
using dnnl::prop_kind;
using graph::Node;
using graph::OpKind;

dnnl::memory WeightCache::get(const std::string& name, const memory::desc& wanted) {
    graph::Initializer& init = graph_.initializers.at(name);
    const memory::desc plain = Tensor::plainDesc(wanted.dims());
    if (wanted == plain) return memory(wanted, engine_, init.values.data());
    for (const Entry& e : reordered_)
        if (e.name == name && e.desc == wanted) return e.tensor->mem();
    auto tensor = std::make_unique<Tensor>(wanted, engine_);
    memory from(plain, engine_, init.values.data());
    dnnl::stream stream(engine_);
    dnnl::reorder(from, tensor->mem()).execute(stream, from, tensor->mem());
    stream.wait();
    reordered_.push_back({name, wanted, std::move(tensor)});
    return reordered_.back().tensor->mem();
}

namespace {

memory::desc anyDesc(const Dims& dims) { return memory::desc(dims, memory::data_type::f32, memory::format_tag::any); }

// Builds one plan: each value's memory in the layout its producer chose, a reorder in front of a
// primitive only where it wants another.
class Builder {
public:
    Builder(const graph::Graph& g, const std::map<std::string, Dims>& shapes, int64_t n, const dnnl::engine& eng,
            WeightCache& weights)
        : g_(g), shapes_(shapes), n_(n), eng_(eng), weights_(weights), plan_(std::make_unique<CompiledPlan>()) {
        plan_->batch = n;
    }

    std::unique_ptr<CompiledPlan> build(bool scaleInput) {
        plan_->input = memory(Tensor::plainDesc(batchDims(g_.sample_shape)), eng_, DNNL_MEMORY_NONE);
        values_[g_.input] = plan_->input;
        if (scaleInput) {
            const memory& dst = buffer(plan_->input.get_desc());
            dnnl::eltwise_forward::primitive_desc pd(
                {prop_kind::forward_inference, dnnl::algorithm::eltwise_linear, plan_->input.get_desc(),
                 g_.metadata.input_scale, g_.metadata.input_shift},
                eng_);
            step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, plan_->input}, {DNNL_ARG_DST, dst}});
            values_[g_.input] = dst;
        }
        for (const Node& node : g_.nodes) values_[node.output] = compile(node);
        finishOutput();
        return std::move(plan_);
    }

private:
    Dims batchDims(const Dims& sample) const {
        Dims d{n_};
        d.insert(d.end(), sample.begin(), sample.end());
        return d;
    }
    const memory& buffer(const memory::desc& md) {
        plan_->buffers.push_back(std::make_unique<Tensor>(md, eng_));
        return plan_->buffers.back()->mem();
    }
    void step(dnnl::primitive p, std::unordered_map<int, memory> args) {
        plan_->steps.push_back({std::move(p), std::move(args)});
    }
    // The value in layout `wanted`, reordered into a new buffer when it is held in another.
    memory as(const memory& value, const memory::desc& wanted) {
        if (value.get_desc() == wanted) return value;
        const memory& dst = buffer(wanted);
        step(dnnl::reorder(value, dst), {{DNNL_ARG_FROM, value}, {DNNL_ARG_TO, dst}});
        return dst;
    }
    memory bias(const Node& node, size_t units) {
        return node.inputs.size() == 3 ? weights_.get(node.inputs[2], Tensor::plainDesc({static_cast<int64_t>(units)}))
                                       : memory();
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
            case OpKind::Relu: {
                dnnl::eltwise_forward::primitive_desc pd(
                    {prop_kind::forward_inference, dnnl::algorithm::eltwise_relu, x.get_desc(), 0.0f, 0.0f}, eng_);
                const memory& dst = buffer(pd.dst_desc());
                step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
                return dst;
            }
            case OpKind::MaxPool:
            case OpKind::GlobalAveragePool: return pool(node, x, out);
            case OpKind::Flatten: return flatten(node, x, out);
            case OpKind::Add: {
                const memory b = as(values_.at(node.inputs[1]), x.get_desc());
                dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, x.get_desc(), b.get_desc(), x.get_desc()},
                                                reluAttr(node.fused_relu), eng_);
                const memory& dst = buffer(pd.dst_desc());
                step(dnnl::binary(pd), {{DNNL_ARG_SRC_0, x}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, dst}});
                return dst;
            }
        }
        throw graph::GraphError("node '" + node.name + "': unknown op kind");
    }

    memory conv(const Node& node, const memory& x, const Dims& out) {
        const Dims wDims = g_.initializers.at(node.inputs[1]).dims;
        const memory::dims stride{node.stride, node.stride}, pad{node.pad, node.pad};
        const memory::desc biasMd = node.inputs.size() == 3 ? anyDesc({out[1]}) : memory::desc();
        // Everything "any": the kernel picks its layouts; the input is reordered to it if need be
        // (the first convolution's plain input usually stays plain).
        dnnl::convolution_forward::primitive_desc pd(
            {prop_kind::forward_inference, dnnl::algorithm::convolution_direct, anyDesc(x.get_desc().dims()),
             anyDesc(wDims), biasMd, anyDesc(out), stride, pad, pad},
            reluAttr(node.fused_relu), eng_);
        const memory src = as(x, pd.src_desc());
        const memory& dst = buffer(pd.dst_desc());
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_.get(node.inputs[1], pd.weights_desc())}, {DNNL_ARG_DST, dst}};
        if (node.inputs.size() == 3) args[DNNL_ARG_BIAS] = weights_.get(node.inputs[2], pd.bias_desc());
        step(dnnl::convolution_forward(pd), std::move(args));
        return dst;
    }

    memory gemm(const Node& node, const memory& x, const Dims& out) {
        // The input as it is held (a pooled [n, C, H, W] in a blocked layout is read directly, its
        // weights viewed as [units, C, H, W]: a Flatten before a Gemm costs nothing).
        const memory::desc src = x.get_desc();
        Dims wDims = src.dims();
        wDims[0] = out[1];
        dnnl::inner_product_forward::primitive_desc pd =
            node.inputs.size() == 3
                ? dnnl::inner_product_forward::primitive_desc(
                      {prop_kind::forward_inference, src, anyDesc(wDims), anyDesc({out[1]}), anyDesc(out)},
                      reluAttr(node.fused_relu), eng_)
                : dnnl::inner_product_forward::primitive_desc(
                      {prop_kind::forward_inference, src, anyDesc(wDims), anyDesc(out)}, reluAttr(node.fused_relu), eng_);
        const memory in = as(x, pd.src_desc());
        const memory& dst = buffer(pd.dst_desc());
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, in}, {DNNL_ARG_WEIGHTS, weights_.get(node.inputs[1], pd.weights_desc())}, {DNNL_ARG_DST, dst}};
        if (node.inputs.size() == 3) args[DNNL_ARG_BIAS] = weights_.get(node.inputs[2], pd.bias_desc());
        step(dnnl::inner_product_forward(pd), std::move(args));
        return dst;
    }

    memory pool(const Node& node, const memory& x, const Dims& out) {
        const Dims in = x.get_desc().dims();
        const bool global = node.kind == OpKind::GlobalAveragePool;
        const memory::dims kernel = global ? memory::dims{in[2], in[3]} : memory::dims{node.kernel, node.kernel};
        const memory::dims stride = global ? kernel : memory::dims{node.stride, node.stride};
        const memory::dims pad = global ? memory::dims{0, 0} : memory::dims{node.pad, node.pad};
        dnnl::pooling_forward::primitive_desc pd(
            {prop_kind::forward_inference,
             global ? dnnl::algorithm::pooling_avg_exclude_padding : dnnl::algorithm::pooling_max, x.get_desc(),
             anyDesc(out), stride, kernel, pad, pad},
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
        return memory(Tensor::plainDesc(out), eng_, plain.get_data_handle());
    }

    // The logits land in the caller's buffer: written there by the last primitive when it writes
    // them plain, else reordered there.
    void finishOutput() {
        const memory& logits = values_.at(g_.output);
        CompiledStep* last = plan_->steps.empty() ? nullptr : &plan_->steps.back();
        const auto dst = last ? last->args.find(DNNL_ARG_DST) : decltype(last->args.end()){};
        const bool onlyOutput = graph::useCount(g_, g_.output) == 1;
        if (last && dst != last->args.end() && onlyOutput && dst->second.get_data_handle() == logits.get_data_handle() &&
            dst->second.get_desc() == Tensor::plainDesc(dst->second.get_desc().dims())) {
            plan_->output = memory(dst->second.get_desc(), eng_, DNNL_MEMORY_NONE);
            dst->second = plan_->output;
            return;
        }
        const memory::desc physical = Tensor::plainDesc(logits.get_desc().dims());
        plan_->output = memory(physical, eng_, DNNL_MEMORY_NONE);
        step(dnnl::reorder(logits, plan_->output), {{DNNL_ARG_FROM, logits}, {DNNL_ARG_TO, plan_->output}});
    }

    const graph::Graph& g_;
    const std::map<std::string, Dims>& shapes_;
    int64_t n_;
    const dnnl::engine& eng_;
    WeightCache& weights_;
    std::unique_ptr<CompiledPlan> plan_;
    std::map<std::string, memory> values_;
};

}  // namespace

std::unique_ptr<CompiledPlan> buildPlan(const graph::Graph& graph, const std::map<std::string, Dims>& shapes, int64_t n,
                                        bool scaleInput, const dnnl::engine& engine, WeightCache& weights) {
    return Builder(graph, shapes, n, engine, weights).build(scaleInput);
}

}  // namespace trainbench::engine::inference
