// importQuantizedOnnx(): the QDQ pairs and weight dequantizations taken out of the model (each one
// checked to be of the form exportQuantizedOnnx() writes), the rest imported as an fp32 model
// (onnximport.cpp) with the weights' dequantized values, then the quantization put back on it and
// checked against what int8 runs.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxformat.h"
#include "engine/onnx/onnxmodel.h"
#include "engine/onnx/onnxnodes.h"
#include "engine/onnx/onnxquantized.h"
#include "engine/onnx/onnxtext.h"

namespace trainbench::engine::onnx {

namespace {

using inference::ActivationQuant;
using inference::QuantizedGraph;
using inference::QuantizedWeight;

bool isDefaultDomain(const ::onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

std::string nodeWhere(const ::onnx::NodeProto& n, const std::string& origin) {
    return origin + ": node '" + n.name() + "' (" + n.op_type() + ")";
}

// The codes of an INT8 or UINT8 tensor (raw_data, or int32_data as ONNX stores them otherwise).
std::vector<int32_t> codes(const ::onnx::TensorProto& t, const std::string& where) {
    int64_t count = 1;
    for (int64_t d : t.dims()) {
        if (d < 0 || (d > 0 && count > kMaxInitializerElements / d))
            throw OnnxError(where + ": dims exceed " + std::to_string(kMaxInitializerElements) + " elements");
        count *= d;
    }
    const bool isSigned = t.data_type() == ::onnx::TensorProto::INT8;
    std::vector<int32_t> v;
    if (t.has_raw_data()) {
        if (static_cast<int64_t>(t.raw_data().size()) != count)
            throw OnnxError(where + ": " + std::to_string(count) + " elements, raw_data has " + std::to_string(t.raw_data().size()) + " bytes");
        for (char c : t.raw_data()) v.push_back(isSigned ? int32_t(static_cast<int8_t>(c)) : int32_t(static_cast<uint8_t>(c)));
    } else {
        if (t.int32_data_size() != count)
            throw OnnxError(where + ": " + std::to_string(count) + " elements, int32_data has " + std::to_string(t.int32_data_size()));
        v.assign(t.int32_data().begin(), t.int32_data().end());
    }
    return v;
}

class QdqReader {
public:
    QdqReader(const ::onnx::ModelProto& m, const std::string& origin, int u8Levels) : m_(m), origin_(origin), u8Levels_(u8Levels) {
        for (const ::onnx::TensorProto& t : m.graph().initializer()) initializers_[t.name()] = &t;
        for (const ::onnx::NodeProto& n : m.graph().node())
            for (const std::string& in : n.input()) readers_[in].push_back(&n);
        for (const ::onnx::ValueInfoProto& v : m.graph().output()) outputs_.insert(v.name());
    }

    // The model without its QDQ: the weights as float initializers of their dequantized values, each
    // pair's value under one name (the float value's, or the graph output's).
    ::onnx::ModelProto fp32() {
        ::onnx::ModelProto fp = m_;
        ::onnx::GraphProto& g = *fp.mutable_graph();
        g.clear_node();
        std::vector<const ::onnx::NodeProto*> kept;
        for (const ::onnx::NodeProto& n : m_.graph().node()) {
            if (pairedDequantize_.count(&n)) continue;  // taken with its QuantizeLinear
            if (isDefaultDomain(n) && n.op_type() == "QuantizeLinear") activation(n);
            else if (isDefaultDomain(n) && n.op_type() == "DequantizeLinear") weight(n);
            else kept.push_back(&n);
        }
        for (const ::onnx::NodeProto* n : kept) {
            ::onnx::NodeProto* copy = g.add_node();
            *copy = *n;
            for (std::string& in : *copy->mutable_input()) in = renamed(in);
            for (std::string& out : *copy->mutable_output()) out = renamed(out);
        }
        google::protobuf::RepeatedPtrField<::onnx::TensorProto> initializers;
        for (const ::onnx::TensorProto& t : g.initializer())
            if (!usedByQdq_.count(t.name())) *initializers.Add() = t;
        for (auto& [name, t] : dequantizedWeights_) *initializers.Add() = std::move(t);
        g.mutable_initializer()->Swap(&initializers);
        return fp;
    }

    // The quantization, on the graph importModel() made of fp32().
    QuantizedGraph quantized(graph::Graph g) const {
        QuantizedGraph q;
        for (const auto& [name, w] : weights_) {
            graph::Initializer& init = g.initializers.at(name);
            init.values.clear();
            init.values.shrink_to_fit();
            q.weights[name] = w;
        }
        for (const Pair& p : pairs_) q.activations[p.value] = p.quant;
        q.graph = std::move(g);
        return q;
    }

    // Which QuantizeLinear node quantizes a value (for messages).
    std::string quantizeNodeOf(const std::string& value) const {
        for (const Pair& p : pairs_)
            if (p.value == value) return p.node;
        return value;
    }

private:
    struct Pair {
        std::string value;  // the value's name in the graph
        std::string node;   // its QuantizeLinear's name
        ActivationQuant quant;
    };

    std::string renamed(const std::string& name) const {
        const auto it = rename_.find(name);
        return it == rename_.end() ? name : it->second;
    }

    const ::onnx::TensorProto& initializer(const ::onnx::NodeProto& n, int input, const std::string& what) const {
        const auto it = n.input_size() > input ? initializers_.find(n.input(input)) : initializers_.end();
        if (it == initializers_.end())
            throw OnnxError(nodeWhere(n, origin_) + ": its " + what + " is not an initializer (a QDQ model of trainbench's "
                            "has constant scales and zero points)");
        return *it->second;
    }

    void onlyAxisAttribute(const ::onnx::NodeProto& n) const {
        for (const ::onnx::AttributeProto& a : n.attribute())
            if (a.name() != "axis") throw OnnxError(nodeWhere(n, origin_) + ": attribute '" + a.name() + "' is not supported");
    }

    // The activation's scale (one positive float) and zero point (uint8 or int8 0).
    ActivationQuant perTensor(const ::onnx::NodeProto& n) const {
        onlyAxisAttribute(n);
        const ::onnx::TensorProto& s = initializer(n, 1, "scale");
        const std::vector<float> scale = importInitializer(s, origin_).values;
        if (scale.size() != 1 || s.dims_size() > 1 || !(scale[0] > 0.0f) || !std::isfinite(scale[0]))
            throw OnnxError(nodeWhere(n, origin_) + ": scale '" + s.name() + "' is not one positive float (per-tensor)");
        ActivationQuant a;
        a.scale = scale[0];
        if (n.input_size() < 3 || n.input(2).empty()) {
            a.is_unsigned = true;  // ONNX: no zero point is a uint8 0
        } else {
            const ::onnx::TensorProto& z = initializer(n, 2, "zero point");
            if (z.data_type() != ::onnx::TensorProto::UINT8 && z.data_type() != ::onnx::TensorProto::INT8)
                throw OnnxError(nodeWhere(n, origin_) + ": zero point '" + z.name() + "' is of data type " +
                                std::to_string(z.data_type()) + " (only uint8 and int8)");
            const std::vector<int32_t> zero = codes(z, origin_ + ": initializer '" + z.name() + "'");
            if (zero.size() != 1 || zero[0] != 0)
                throw OnnxError(nodeWhere(n, origin_) + ": zero point '" + z.name() + "' is not one 0 (trainbench's int8 is symmetric)");
            a.is_unsigned = z.data_type() == ::onnx::TensorProto::UINT8;
            usedByQdq_.insert(z.name());
        }
        usedByQdq_.insert(s.name());
        a.levels = a.is_unsigned ? u8Levels_ : 127;
        return a;
    }

    // QuantizeLinear v -> q, read by one DequantizeLinear q -> d of the same scale and zero point only.
    void activation(const ::onnx::NodeProto& n) {
        const std::string where = nodeWhere(n, origin_);
        if (n.input_size() < 2 || n.output_size() != 1) throw OnnxError(where + ": expected inputs x, scale[, zero point] and one output");
        const ActivationQuant a = perTensor(n);
        const auto readers = readers_.find(n.output(0));
        if (readers == readers_.end() || readers->second.size() != 1 || readers->second[0]->op_type() != "DequantizeLinear" ||
            readers->second[0]->input(0) != n.output(0) || outputs_.count(n.output(0)))
            throw OnnxError(where + ": its codes '" + n.output(0) + "' must be read by one DequantizeLinear and nothing else "
                            "(trainbench's int8 models hold activations as QuantizeLinear -> DequantizeLinear pairs)");
        const ::onnx::NodeProto& dq = *readers->second[0];
        if (dq.output_size() != 1) throw OnnxError(nodeWhere(dq, origin_) + ": expected one output");
        if (perTensor(dq) != a)
            throw OnnxError(nodeWhere(dq, origin_) + ": its scale or zero point differs from its QuantizeLinear's ('" + n.name() + "')");
        pairedDequantize_.insert(&dq);
        const std::string& from = n.input(0);
        const std::string& to = dq.output(0);
        if (dequantized_.count(from) || quantized_.count(from))
            throw OnnxError(where + ": value '" + from + "' is quantized twice");
        quantized_.insert(from);
        dequantized_.insert(to);
        // The value keeps the name its readers know it by: the graph output's, else the float one's.
        const bool isOutput = outputs_.count(to) > 0;
        rename_[isOutput ? from : to] = isOutput ? to : from;
        pairs_.push_back({isOutput ? to : from, n.name(), a});
    }

    // DequantizeLinear of an int8 initializer [out, ...], scales per output channel (axis 0), zero
    // points 0: a Conv or Gemm weight.
    void weight(const ::onnx::NodeProto& n) {
        const std::string where = nodeWhere(n, origin_);
        const auto x = n.input_size() > 0 ? initializers_.find(n.input(0)) : initializers_.end();
        if (x == initializers_.end())
            throw OnnxError(where + ": reads '" + (n.input_size() ? n.input(0) : std::string()) +
                            "', neither an int8 initializer (a weight) nor the codes of the QuantizeLinear of a pair");
        const ::onnx::TensorProto& t = *x->second;
        if (t.data_type() != ::onnx::TensorProto::INT8)
            throw OnnxError(where + ": weight '" + t.name() + "' is of data type " + std::to_string(t.data_type()) +
                            " (trainbench's int8 weights are int8, 3; biases stay float)");
        onlyAxisAttribute(n);
        int64_t axis = 1;  // ONNX's default
        for (const ::onnx::AttributeProto& a : n.attribute()) axis = a.i();
        if (t.dims_size() < 2 || axis != 0)
            throw OnnxError(where + ": weight '" + t.name() + "' must be dequantized per output channel (axis 0 of [out, ...])");
        QuantizedWeight w;
        w.dims.assign(t.dims().begin(), t.dims().end());
        for (int32_t c : codes(t, origin_ + ": initializer '" + t.name() + "'")) w.values.push_back(static_cast<int8_t>(c));
        const ::onnx::TensorProto& s = initializer(n, 1, "scale");
        w.scales = importInitializer(s, origin_).values;
        if (s.dims_size() != 1 || static_cast<int64_t>(w.scales.size()) != w.dims[0])
            throw OnnxError(where + ": scale '" + s.name() + "' is not one float per output channel (" + std::to_string(w.dims[0]) + ")");
        for (float v : w.scales)
            if (!(v > 0.0f) || !std::isfinite(v)) throw OnnxError(where + ": scale '" + s.name() + "' holds a scale that is not a positive float");
        if (n.input_size() > 2 && !n.input(2).empty()) {
            const ::onnx::TensorProto& z = initializer(n, 2, "zero point");
            const bool zeros = z.data_type() == ::onnx::TensorProto::INT8 && [&] {
                const std::vector<int32_t> v = codes(z, origin_ + ": initializer '" + z.name() + "'");
                return static_cast<int64_t>(v.size()) == w.dims[0] && std::all_of(v.begin(), v.end(), [](int32_t c) { return c == 0; });
            }();
            if (!zeros) throw OnnxError(where + ": zero point '" + z.name() + "' is not int8 zeros, one per output channel (symmetric)");
            usedByQdq_.insert(z.name());
        }
        usedByQdq_.insert(t.name());
        usedByQdq_.insert(s.name());
        const std::string& name = n.output(0);
        if (weights_.count(name)) throw OnnxError(where + ": weight '" + name + "' is written twice");
        ::onnx::TensorProto& f = dequantizedWeights_[name];
        f.set_name(name);
        f.set_data_type(::onnx::TensorProto::FLOAT);
        for (int64_t d : w.dims) f.add_dims(d);
        // Only for importModel() to check the shapes with: the codes are what is kept.
        std::vector<float> values(w.values.size());
        const size_t per = w.values.size() / w.scales.size();
        for (size_t i = 0; i < values.size(); ++i) values[i] = float(w.values[i]) * w.scales[i / per];
        f.set_raw_data(values.data(), values.size() * sizeof(float));
        weights_[name] = std::move(w);
    }

    const ::onnx::ModelProto& m_;
    std::string origin_;
    int u8Levels_;
    std::map<std::string, const ::onnx::TensorProto*> initializers_;
    std::map<std::string, std::vector<const ::onnx::NodeProto*>> readers_;
    std::set<std::string> outputs_;
    mutable std::set<std::string> usedByQdq_;
    std::set<const ::onnx::NodeProto*> pairedDequantize_;
    std::set<std::string> quantized_, dequantized_;
    std::map<std::string, std::string> rename_;
    std::vector<Pair> pairs_;
    std::map<std::string, QuantizedWeight> weights_;
    std::map<std::string, ::onnx::TensorProto> dequantizedWeights_;
};

using Metadata = std::map<std::string, std::string>;

const std::string& required(const Metadata& meta, const char* key, const std::string& origin) {
    const auto it = meta.find(key);
    if (it == meta.end())
        throw OnnxError(origin + ": metadata '" + key + "' is missing: not an int8 model of trainbench's (docs/onnx.md)");
    return it->second;
}

std::string where(const std::string& origin, const char* key) { return origin + ": metadata '" + key + "'"; }

inference::CalibrationRecord calibrationOf(const Metadata& meta, const std::string& origin) {
    constexpr int64_t kMax = int64_t{1} << 40;
    inference::CalibrationRecord c;
    const auto integer = [&](const char* key, int64_t lowest, int64_t highest) {
        return parseIntText(required(meta, key, origin), where(origin, key), lowest, highest);
    };
    c.batches = integer(kKeyCalibrationBatches, 1, kMax);
    c.batch_size = integer(kKeyCalibrationBatchSize, 1, kMax);
    c.examples = integer(kKeyCalibrationExamples, 1, kMax);
    c.method = required(meta, kKeyCalibrationMethod, origin);
    if (c.method != "minmax" && c.method != "percentile")
        throw OnnxError(where(origin, kKeyCalibrationMethod) + ": '" + c.method.substr(0, 64) + "' is not minmax or percentile");
    c.percentile = parseDoubleText(required(meta, kKeyCalibrationPercentile, origin), where(origin, kKeyCalibrationPercentile));
    c.seed = parseUnsignedText(required(meta, kKeyCalibrationSeed, origin), where(origin, kKeyCalibrationSeed));
    c.u8_levels = static_cast<int>(integer(kKeyCalibrationU8Levels, 1, 255));
    return c;
}

QuantizationRecord recordOf(const Metadata& meta, const std::string& origin) {
    constexpr int64_t kMax = int64_t{1} << 50;
    QuantizationRecord r;
    r.fp32_weight_bytes = parseIntText(required(meta, kKeyFp32WeightBytes, origin), where(origin, kKeyFp32WeightBytes), 0, kMax);
    r.int8_weight_bytes = parseIntText(required(meta, kKeyInt8WeightBytes, origin), where(origin, kKeyInt8WeightBytes), 0, kMax);
    if (const auto it = meta.find(kKeyTestExamples); it != meta.end())
        r.test_examples = parseIntText(it->second, where(origin, kKeyTestExamples), 1, kMax);
    for (auto [key, into] : {std::pair{kKeyFp32TestAccuracy, &r.fp32_accuracy}, std::pair{kKeyInt8TestAccuracy, &r.int8_accuracy}})
        if (const auto it = meta.find(key); it != meta.end()) {
            *into = parseDoubleText(it->second, where(origin, key));
            if (**into < 0.0 || **into > 1.0) throw OnnxError(where(origin, key) + ": not a fraction in [0, 1]");
        }
    if (const auto it = meta.find(kKeyIsa); it != meta.end()) r.isa = it->second;
    return r;
}

// What int8 runs (int8plan.cpp), by node: its ops; an int8 weight for each Conv and Gemm and for
// nothing else; codes for each value int8 holds in codes (pooling and Flatten in their input's) and
// for nothing else; no input shift.
void checkInt8Wiring(const QuantizedGraph& q, const QdqReader& reader, const std::string& origin) {
    const graph::Graph& g = q.graph;
    try {
        inference::checkInt8Ops(g);
    } catch (const graph::GraphError& e) {
        throw OnnxError(origin + ": " + e.what());
    }
    if (g.metadata.input_shift != 0.0f)
        throw OnnxError(origin + ": metadata '" + kKeyInputShift + "': int8 takes no input shift");
    std::map<std::string, const graph::Node*> writer;
    for (const graph::Node& n : g.nodes) {
        writer[n.output] = &n;
        const std::string node = origin + ": node '" + n.name + "' (" + graph::opKindName(n.kind) + ")";
        const bool weighted = n.kind == graph::OpKind::Conv || n.kind == graph::OpKind::Gemm;
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            const bool isWeight = weighted && i == 1;
            if (isWeight && !q.weights.count(n.inputs[i]))
                throw OnnxError(node + ": weight '" + n.inputs[i] + "' is float; int8 needs it as int8 codes dequantized "
                                "per output channel (DequantizeLinear, axis 0)");
            if (!isWeight && q.weights.count(n.inputs[i]))
                throw OnnxError(node + ": reads the int8 weight '" + n.inputs[i] + "' as input " + std::to_string(i) +
                                "; int8 weights are the weights (input 1) of Conv and Gemm only");
        }
    }
    const std::map<std::string, std::string> sources = inference::activationSources(g);
    for (const auto& [value, source] : sources) {
        const auto w = writer.find(value);
        const std::string by = w == writer.end() ? origin + ": the input '" + value + "'"
                                                 : origin + ": node '" + w->second->name + "' (" + graph::opKindName(w->second->kind) + ")";
        const auto a = q.activations.find(value);
        if (a == q.activations.end())
            throw OnnxError(by + ": its output '" + value + "' is not quantized; int8 holds it in codes "
                            "(a QuantizeLinear -> DequantizeLinear pair after it)");
        if (source != value && !(a->second == q.activations.at(source)))
            throw OnnxError(by + ": its output is quantized with scale " + floatText(a->second.scale) + ", its input '" + source +
                            "' with " + floatText(q.activations.at(source).scale) + "; int8 pooling and Flatten keep their input's codes");
    }
    for (const auto& [value, quant] : q.activations)
        if (!sources.count(value))
            throw OnnxError(origin + ": node '" + reader.quantizeNodeOf(value) + "' (QuantizeLinear): '" + value +
                            (writer.count(value) ? "' is fp32 logits in int8, not codes" : "' is not a value of the graph int8 runs"));
}

}  // namespace

QuantizedModel importQuantizedOnnx(std::string_view bytes, const std::string& origin) {
    const ::onnx::ModelProto m = parseModel(bytes, origin);
    Metadata meta;
    for (const ::onnx::StringStringEntryProto& e : m.metadata_props()) meta[e.key()] = e.value();
    const std::string& precision = required(meta, kKeyPrecision, origin);
    if (precision != "int8") throw OnnxError(where(origin, kKeyPrecision) + ": '" + precision.substr(0, 64) + "' (expected int8)");
    QuantizedModel out;
    const inference::CalibrationRecord calibration = calibrationOf(meta, origin);
    out.record = recordOf(meta, origin);
    QdqReader reader(m, origin, calibration.u8_levels);
    const ::onnx::ModelProto fp32 = reader.fp32();
    out.graph = reader.quantized(importModel(fp32, origin));
    out.graph.calibration = calibration;
    checkInt8Wiring(out.graph, reader, origin);
    return out;
}

QuantizedModel readQuantizedOnnx(const std::string& path) {
    QuantizedModel q = importQuantizedOnnx(readModelBytes(path), path);
    if (q.graph.graph.metadata.source_run.empty()) q.graph.graph.metadata.source_run = "ONNX file " + path;
    return q;
}

}  // namespace trainbench::engine::onnx
