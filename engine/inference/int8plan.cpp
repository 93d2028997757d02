#include "engine/inference/int8plan.h"

#include "engine/graph/graphpasses.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine::inference {

using dnnl::memory;
using dnnl::prop_kind;
using graph::Node;
using graph::OpKind;
using dt = memory::data_type;

namespace {

// md's layout with another element type.
memory::desc retyped(const memory::desc& md, dt type) {
    memory::desc d = md;
    d.data.data_type = static_cast<dnnl_data_type_t>(type);
    return d;
}

memory::desc plainOf(const graph::Dims& dims, dt type) { return retyped(Tensor::plainDesc(dims), type); }

memory::desc anyOf(const graph::Dims& dims, dt type) { return memory::desc(dims, type, memory::format_tag::any); }

// A value as the plan holds it: its memory and the quantization its codes are in (f32: none).
struct Held {
    memory mem;
    ActivationQuant quant;
};

class Int8Builder {
public:
    Int8Builder(const QuantizedGraph& q, const std::map<std::string, graph::Dims>& shapes, Int8Plan& plan,
                const dnnl::engine& eng, Int8Weights& weights)
        : q_(q), g_(q.graph), shapes_(shapes), n_(plan.batch), eng_(eng), weights_(weights), plan_(plan) {}

    // The stored input, quantized: code = x * input_scale / scale, rounded and saturated.
    void start() {
        CompiledStage& s = plan_.stage;
        s.batch = n_;
        s.input = memory(Tensor::plainDesc(batchDims(g_.sample_shape)), eng_, DNNL_MEMORY_NONE);
        const ActivationQuant& a = q_.activations.at(g_.input);
        const memory dst = buffer(plainOf(batchDims(g_.sample_shape), a.is_unsigned ? dt::u8 : dt::s8));
        dnnl::primitive_attr attr = userScratchpad();
        attr.set_output_scales(0, {g_.metadata.input_scale / a.scale});
        dnnl::reorder::primitive_desc pd(eng_, s.input.get_desc(), eng_, dst.get_desc(), attr);
        step(dnnl::reorder(pd), withScratch(pd, {{DNNL_ARG_FROM, s.input}, {DNNL_ARG_TO, dst}}));
        values_[g_.input] = {dst, a};
    }

    void compileNodes() {
        for (const Node& node : g_.nodes) values_[node.output] = compile(node);
    }

    // The logits, plain fp32: written there by the last op when it writes them so, else reordered
    // (and dequantized) there.
    void finish() {
        CompiledStage& s = plan_.stage;
        const Held& held = values_.at(g_.output);
        const memory::desc wanted = Tensor::plainDesc({n_, g_.classes});
        CompiledStep& last = s.steps.back();
        if (held.mem.get_desc() == wanted && graph::useCount(g_, g_.output) == 1 && last.args.count(DNNL_ARG_DST) &&
            last.args.at(DNNL_ARG_DST).get_data_handle() == held.mem.get_data_handle()) {
            s.output = memory(wanted, eng_, DNNL_MEMORY_NONE);
            last.args[DNNL_ARG_DST] = s.output;
            return;
        }
        s.output = memory(wanted, eng_, DNNL_MEMORY_NONE);
        memory from = held.mem;
        if (from.get_desc().dims() != wanted.dims()) {
            from = as(from, plainOf(from.get_desc().dims(), from.get_desc().data_type()));
            from = memory(plainOf(wanted.dims(), from.get_desc().data_type()), eng_, from.get_data_handle());
        }
        dnnl::primitive_attr attr = userScratchpad();
        if (from.get_desc().data_type() != dt::f32) attr.set_output_scales(0, {held.quant.scale});
        dnnl::reorder::primitive_desc pd(eng_, from.get_desc(), eng_, wanted, attr);
        step(dnnl::reorder(pd), withScratch(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, s.output}}));
    }

private:
    graph::Dims batchDims(const graph::Dims& sample) const {
        graph::Dims d{n_};
        d.insert(d.end(), sample.begin(), sample.end());
        return d;
    }
    memory buffer(const memory::desc& md) {
        plan_.buffers.emplace_back(md, eng_);
        return plan_.buffers.back();
    }
    void step(dnnl::primitive p, std::unordered_map<int, memory> args) {
        plan_.stage.steps.push_back({std::move(p), std::move(args), {}});
    }
    memory as(const memory& value, const memory::desc& wanted) {
        if (value.get_desc() == wanted) return value;
        const memory dst = buffer(wanted);
        dnnl::reorder::primitive_desc pd(eng_, value.get_desc(), eng_, wanted, userScratchpad());
        step(dnnl::reorder(pd), withScratch(pd, {{DNNL_ARG_FROM, value}, {DNNL_ARG_TO, dst}}));
        return dst;
    }
    // Every primitive gets its scratchpad from the plan (scratchpad_mode::user): in oneDNN's default
    // (library) mode the scratchpad belongs to the thread that created the primitive, and an int8
    // convolution or inner product created on one thread fails ("could not execute a primitive")
    // when a server's instance later runs on another batch thread.
    static dnnl::primitive_attr userScratchpad() {
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        return attr;
    }
    template <typename PrimitiveDesc>
    std::unordered_map<int, memory> withScratch(const PrimitiveDesc& pd, std::unordered_map<int, memory> args) {
        const memory::desc md = pd.scratchpad_desc();
        if (md.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = buffer(md);
        return args;
    }

    // How an op's output is written: fp32 when it is the logits (read by nothing else), else in
    // its calibrated codes.
    bool writesLogits(const Node& node) const { return node.output == g_.output && graph::useCount(g_, g_.output) == 1; }
    dt typeOf(const ActivationQuant& a) const { return a.is_unsigned ? dt::u8 : dt::s8; }

    // ReLU, and for 7-bit u8 codes the clip to them (the post-ops run on the output-scaled values).
    dnnl::post_ops postOps(const Node& node, bool logits, const ActivationQuant& out) const {
        dnnl::post_ops ops;
        if (!logits && out.is_unsigned && out.levels < 255)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, float(out.levels));
        else if (node.fused_relu)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        return ops;
    }

    Held compile(const Node& node) {
        const Held& x = values_.at(node.inputs[0]);
        const graph::Dims out = batchDims(shapes_.at(node.output));
        switch (node.kind) {
            case OpKind::Conv:
            case OpKind::Gemm: return weighted(node, x, out);
            case OpKind::MaxPool:
            case OpKind::GlobalAveragePool: return pool(node, x, out);
            case OpKind::Flatten: return flatten(node, x, out);
            case OpKind::Add: return add(node, x);
            case OpKind::BatchNormalization:
            case OpKind::Relu:
            case OpKind::Clip:
            case OpKind::Sigmoid:
            case OpKind::Tanh:
            case OpKind::Softmax:
            case OpKind::AveragePool:
            case OpKind::Mul:
            case OpKind::Sub:
            case OpKind::Div:
            case OpKind::MatMul:
            case OpKind::Gather:
            case OpKind::LayerNormalization:
            case OpKind::Reshape:
            case OpKind::Transpose:
            case OpKind::Erf:
            case OpKind::Concat: break;  // checkInt8Ops refused them
        }
        throw graph::GraphError("node '" + node.name + "' (" + graph::opKindName(node.kind) + "): not run in int8");
    }

    // A Conv or Gemm: u8/s8 x s8, scales[oc] = s_x s_w[oc] / s_y requantizing into the output's
    // codes (s_y = 1 for fp32 logits).
    Held weighted(const Node& node, const Held& x, const graph::Dims& out) {
        const bool logits = writesLogits(node);
        const ActivationQuant y = logits ? ActivationQuant{1.0f, false, 0} : q_.activations.at(node.output);
        const QuantizedWeight& w = q_.weights.at(node.inputs[1]);
        std::vector<float> scales(w.scales.size());
        for (size_t c = 0; c < scales.size(); ++c) scales[c] = x.quant.scale * w.scales[c] / y.scale;
        dnnl::primitive_attr attr = userScratchpad();
        attr.set_output_scales(1 << 1, scales);
        attr.set_post_ops(postOps(node, logits, y));
        const dt outType = logits ? dt::f32 : typeOf(y);
        const bool hasBias = node.inputs.size() == 3;
        const memory::desc biasMd = hasBias ? anyOf({out[1]}, dt::f32) : memory::desc();
        const dt inType = x.mem.get_desc().data_type();
        memory src = x.mem;
        if (node.kind == OpKind::Conv) {
            const memory::dims stride{node.stride, node.stride}, pad{node.pad, node.pad};
            dnnl::convolution_forward::primitive_desc pd(
                {prop_kind::forward_inference, dnnl::algorithm::convolution_direct, anyOf(src.get_desc().dims(), inType),
                 anyOf(w.dims, dt::s8), biasMd, anyOf(out, outType), stride, pad, pad},
                attr, eng_);
            return emit<dnnl::convolution_forward>(node, x, pd, y);
        }
        // A Gemm reads a 4-D input as it is held (the weights' rows [out, C*H*W] are [out, C, H, W]).
        graph::Dims wDims = src.get_desc().dims();
        wDims[0] = w.dims[0];
        const memory::desc srcMd = src.get_desc().dims().size() > 2 ? anyOf(src.get_desc().dims(), inType) : src.get_desc();
        dnnl::inner_product_forward::primitive_desc pd(
            hasBias ? dnnl::inner_product_forward::desc(prop_kind::forward_inference, srcMd, anyOf(wDims, dt::s8), biasMd,
                                                        anyOf(out, outType))
                    : dnnl::inner_product_forward::desc(prop_kind::forward_inference, srcMd, anyOf(wDims, dt::s8),
                                                        anyOf(out, outType)),
            attr, eng_);
        return emit<dnnl::inner_product_forward>(node, x, pd, y);
    }

    template <typename Primitive>
    Held emit(const Node& node, const Held& x, const typename Primitive::primitive_desc& pd, const ActivationQuant& y) {
        const memory src = as(x.mem, pd.src_desc());
        const memory dst = buffer(pd.dst_desc());
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_.weight(node.inputs[1], pd.weights_desc())}, {DNNL_ARG_DST, dst}};
        if (node.inputs.size() == 3)
            args[DNNL_ARG_BIAS] = weights_.bias(node.inputs[2], node.inputs[1], x.quant.scale, pd.bias_desc());
        step(Primitive(pd), withScratch(pd, std::move(args)));
        return {dst, y};
    }

    // Pooling keeps its input's codes and scale (a max of codes is the code of the max; an average
    // rounds).
    Held pool(const Node& node, const Held& x, const graph::Dims& out) {
        const graph::Dims in = x.mem.get_desc().dims();
        const bool global = node.kind == OpKind::GlobalAveragePool;
        const memory::dims kernel = global ? memory::dims{in[2], in[3]} : memory::dims{node.kernel, node.kernel};
        const memory::dims stride = global ? kernel : memory::dims{node.stride, node.stride};
        const memory::dims pad = global ? memory::dims{0, 0} : memory::dims{node.pad, node.pad};
        dnnl::pooling_forward::primitive_desc pd(
            {prop_kind::forward_inference,
             global ? dnnl::algorithm::pooling_avg_exclude_padding : dnnl::algorithm::pooling_max, x.mem.get_desc(),
             anyOf(out, x.mem.get_desc().data_type()), stride, kernel, pad, pad},
            userScratchpad(), eng_);
        const memory dst = buffer(pd.dst_desc());
        step(dnnl::pooling_forward(pd), withScratch(pd, {{DNNL_ARG_SRC, x.mem}, {DNNL_ARG_DST, dst}}));
        return {dst, x.quant};
    }

    // As CompiledGraph's: passed on as held when only Gemms read it, else made plain and viewed 2-D.
    Held flatten(const Node& node, const Held& x, const graph::Dims& out) {
        bool onlyGemms = node.output != g_.output;
        for (const Node& reader : g_.nodes)
            for (size_t i = 0; i < reader.inputs.size(); ++i)
                if (reader.inputs[i] == node.output && (reader.kind != OpKind::Gemm || i != 0)) onlyGemms = false;
        if (onlyGemms) return x;
        const dt type = x.mem.get_desc().data_type();
        const memory plain = as(x.mem, plainOf(x.mem.get_desc().dims(), type));
        return {memory(plainOf(out, type), eng_, plain.get_data_handle()), x.quant};
    }

    // a + b into the output's codes: each input's codes scaled by its scale over the output's.
    Held add(const Node& node, const Held& a) {
        const Held& b = values_.at(node.inputs[1]);
        const bool logits = writesLogits(node);
        const ActivationQuant y = logits ? ActivationQuant{1.0f, false, 0} : q_.activations.at(node.output);
        const memory bm = as(b.mem, retyped(a.mem.get_desc(), b.mem.get_desc().data_type()));
        dnnl::primitive_attr attr = userScratchpad();
        attr.set_scales(DNNL_ARG_SRC_0, 0, {a.quant.scale / y.scale});
        attr.set_scales(DNNL_ARG_SRC_1, 0, {b.quant.scale / y.scale});
        attr.set_post_ops(postOps(node, logits, y));
        const memory::desc dstMd = retyped(a.mem.get_desc(), logits ? dt::f32 : typeOf(y));
        dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, a.mem.get_desc(), bm.get_desc(), dstMd}, attr, eng_);
        const memory dst = buffer(pd.dst_desc());
        step(dnnl::binary(pd), withScratch(pd, {{DNNL_ARG_SRC_0, a.mem}, {DNNL_ARG_SRC_1, bm}, {DNNL_ARG_DST, dst}}));
        return {dst, y};
    }

    const QuantizedGraph& q_;
    const graph::Graph& g_;
    const std::map<std::string, graph::Dims>& shapes_;
    int64_t n_;
    const dnnl::engine& eng_;
    Int8Weights& weights_;
    Int8Plan& plan_;
    std::map<std::string, Held> values_;
};

}  // namespace

std::unique_ptr<Int8Plan> buildInt8Plan(const QuantizedGraph& q, const std::map<std::string, graph::Dims>& shapes,
                                        int64_t n, const dnnl::engine& engine, Int8Weights& weights) {
    auto plan = std::make_unique<Int8Plan>();
    plan->batch = n;
    Int8Builder b(q, shapes, *plan, engine, weights);
    b.start();
    b.compileNodes();
    b.finish();
    return plan;
}

void runInt8Plan(Int8Plan& p, const float* x, float* logits, dnnl::stream& stream) {
    // oneDNN only reads the input; its memory objects take a non-const handle.
    p.stage.input.set_data_handle(const_cast<float*>(x));
    p.stage.output.set_data_handle(logits);
    for (CompiledStep& step : p.stage.steps) runStep(step, stream);
    stream.wait();
}

}  // namespace trainbench::engine::inference
