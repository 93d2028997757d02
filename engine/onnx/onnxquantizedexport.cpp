// exportQuantizedOnnx(): the fp32 export of the dequantized graph (onnxexport.cpp), then its
// quantized weights replaced by int8 initializers and DequantizeLinear nodes, and a
// QuantizeLinear -> DequantizeLinear pair put after each value int8 holds in codes.
#include <onnx/onnx_pb.h>

#include <vector>

#include "engine/onnx/onnxformat.h"
#include "engine/onnx/onnxmodel.h"
#include "engine/onnx/onnxquantized.h"
#include "engine/onnx/onnxtext.h"

namespace trainbench::engine::onnx {

namespace {

using inference::ActivationQuant;
using inference::QuantizedGraph;

void setTensor(::onnx::TensorProto* t, const std::string& name, ::onnx::TensorProto::DataType type, const graph::Dims& dims,
               const void* data, size_t bytes) {
    t->Clear();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(data, bytes);
}

::onnx::NodeProto node(const std::string& name, const char* op, std::vector<std::string> inputs, const std::string& output) {
    ::onnx::NodeProto n;
    n.set_name(name);
    n.set_op_type(op);
    for (const std::string& in : inputs) n.add_input(in);
    n.add_output(output);
    return n;
}

class QdqWriter {
public:
    QdqWriter(const QuantizedGraph& q, ::onnx::GraphProto& g) : q_(q), g_(g) {}

    void write() {
        const std::vector<::onnx::NodeProto> fp32(g_.node().begin(), g_.node().end());
        g_.clear_node();
        std::vector<int> quantized;  // indices: adding initializers while iterating them would move them
        for (int i = 0; i < g_.initializer_size(); ++i)
            if (q_.weights.count(g_.initializer(i).name())) quantized.push_back(i);
        for (int i : quantized) weight(i);
        for (const auto& [name, w] : q_.weights) weightDequantize(name, w);
        if (q_.activations.count(q_.graph.input)) qdq(q_.graph.input);
        for (::onnx::NodeProto n : fp32) {
            const std::string written = n.output(0);
            for (std::string& in : *n.mutable_input())
                if (q_.activations.count(in) && in != q_.graph.output) in = dequantizedName(in);
            if (written == q_.graph.output && q_.activations.count(written)) n.set_output(0, floatName(written));
            *g_.add_node() = std::move(n);
            if (q_.activations.count(written)) qdq(written);
        }
    }

private:
    // W's float initializer becomes "W/quantized" (int8 codes), with its scales and zero points.
    void weight(int index) {
        const std::string name = g_.initializer(index).name();
        const inference::QuantizedWeight& w = q_.weights.at(name);
        setTensor(g_.mutable_initializer(index), quantizedName(name), ::onnx::TensorProto::INT8, w.dims, w.values.data(), w.values.size());
        const graph::Dims channels{static_cast<int64_t>(w.scales.size())};
        setTensor(g_.add_initializer(), scaleName(name), ::onnx::TensorProto::FLOAT, channels, w.scales.data(),
                  w.scales.size() * sizeof(float));
        const std::vector<int8_t> zeros(w.scales.size(), 0);
        setTensor(g_.add_initializer(), zeroPointName(name), ::onnx::TensorProto::INT8, channels, zeros.data(), zeros.size());
    }

    void weightDequantize(const std::string& name, const inference::QuantizedWeight&) {
        ::onnx::NodeProto n = node(dequantizeNode(name), "DequantizeLinear",
                                   {quantizedName(name), scaleName(name), zeroPointName(name)}, name);
        ::onnx::AttributeProto* axis = n.add_attribute();
        axis->set_name("axis");
        axis->set_type(::onnx::AttributeProto::INT);
        axis->set_i(0);  // per output channel: [out, in, kh, kw] and Gemm's [out, in] (transB = 1)
        *g_.add_node() = std::move(n);
    }

    // v's codes: u8 or s8 by the zero point's type (0: symmetric), per-tensor scale.
    void qdq(const std::string& v) {
        const ActivationQuant& a = q_.activations.at(v);
        const bool output = v == q_.graph.output;
        setTensor(g_.add_initializer(), scaleName(v), ::onnx::TensorProto::FLOAT, {}, &a.scale, sizeof(float));
        const uint8_t zero = 0;
        setTensor(g_.add_initializer(), zeroPointName(v), a.is_unsigned ? ::onnx::TensorProto::UINT8 : ::onnx::TensorProto::INT8,
                  {}, &zero, 1);
        *g_.add_node() = node(quantizeNode(v), "QuantizeLinear", {output ? floatName(v) : v, scaleName(v), zeroPointName(v)},
                              quantizedName(v));
        *g_.add_node() = node(dequantizeNode(v), "DequantizeLinear", {quantizedName(v), scaleName(v), zeroPointName(v)},
                              output ? v : dequantizedName(v));
    }

    const QuantizedGraph& q_;
    ::onnx::GraphProto& g_;
};

void addRecord(::onnx::ModelProto& m, const QuantizedGraph& q, const QuantizationRecord& r) {
    const inference::CalibrationRecord& c = q.calibration;
    addMetadata(m, kKeyPrecision, "int8");
    addMetadata(m, kKeyCalibrationBatches, std::to_string(c.batches));
    addMetadata(m, kKeyCalibrationBatchSize, std::to_string(c.batch_size));
    addMetadata(m, kKeyCalibrationExamples, std::to_string(c.examples));
    addMetadata(m, kKeyCalibrationMethod, c.method);
    addMetadata(m, kKeyCalibrationPercentile, doubleText(c.percentile));
    addMetadata(m, kKeyCalibrationSeed, std::to_string(c.seed));
    addMetadata(m, kKeyCalibrationU8Levels, std::to_string(c.u8_levels));
    addMetadata(m, kKeyInt8WeightBytes, std::to_string(q.weightBytes()));
    addMetadata(m, kKeyFp32WeightBytes, std::to_string(r.fp32_weight_bytes));
    if (r.test_examples > 0) {
        addMetadata(m, kKeyTestExamples, std::to_string(r.test_examples));
        if (r.fp32_accuracy) addMetadata(m, kKeyFp32TestAccuracy, doubleText(*r.fp32_accuracy));
        if (r.int8_accuracy) addMetadata(m, kKeyInt8TestAccuracy, doubleText(*r.int8_accuracy));
    }
    if (!r.isa.empty()) addMetadata(m, kKeyIsa, r.isa);
}

}  // namespace

std::string exportQuantizedOnnx(const QuantizedGraph& q, const QuantizationRecord& record, const ExportOptions& options) {
    ::onnx::ModelProto m = exportModel(q.dequantized(), options);
    QdqWriter(q, *m.mutable_graph()).write();
    addRecord(m, q, record);
    return serializeModel(m);
}

void writeQuantizedOnnx(const QuantizedGraph& q, const QuantizationRecord& record, const std::string& path,
                        const ExportOptions& options) {
    writeModelBytes(exportQuantizedOnnx(q, record, options), path);
}

}  // namespace trainbench::engine::onnx
