#pragma once
// A model for inference as a graph: the form a trained model is served, quantized and exported in,
// and what an imported ONNX model becomes (issue 22). Nodes in execution order, each reading named
// values and writing one; weights are named initializers. Tensors are NCHW / [N, features] with the
// batch dimension left free: a graph runs at any batch size.
//
// Layouts follow PyTorch and ONNX: Conv weights [out, in, kh, kw], Gemm (Dense) weights [out, in]
// (ONNX Gemm with transB = 1), BatchNormalization scale/bias/mean/var [C].
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trainbench::engine::graph {

using Dims = std::vector<int64_t>;

// A graph that does not hold together: the message names the node (or initializer) and what is
// wrong with it ("node 'dense_3' (Gemm): weight 'dense_3.weight' is 10x300, the input has 256
// features").
class GraphError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class OpKind {
    Conv,                // inputs: x, W[, B]; attrs: kernel, stride, pads; fused_relu
    Gemm,                // inputs: x [N, in], W [out, in][, B]; fused_relu. A rank > 2 input is flattened.
    BatchNormalization,  // inputs: x, scale, bias, mean, var; attr: epsilon; fused_relu
    Relu,                // inputs: x
    MaxPool,             // inputs: x; attrs: kernel, stride, pads
    GlobalAveragePool,   // inputs: x
    Flatten,             // inputs: x ([N, ...] -> [N, prod(...)])
    Add,                 // inputs: a, b (same shape, or b an initializer as for Mul); fused_relu (a residual block's out = relu(a + b))
    Clip,                // inputs: x; attrs: clip_min, clip_max (ReLU6: 0 and 6)
    Sigmoid,             // inputs: x
    Tanh,                // inputs: x
    AveragePool,         // inputs: x; attrs: kernel, stride, pads, count_include_pad
    Softmax,             // inputs: x, a [features] value: over its features (the classes of a classifier's head)
    Mul,                 // inputs: a, b: b a value of a's shape, or an initializer broadcast against a per example
    Sub,                 //   (ONNX's rules from the right: [C, 1, 1] per channel, [1] or [] a scalar;
    Div,                 //   a leading batch dimension of 1 allowed)
    // Ops of any rank (issue 22: a BERT-style encoder). Shapes below are per example.
    MatMul,              // inputs: a [..., M, K], b: an initializer [K, P] (-> [..., M, P]) or a value [..., K, P] of a's leading dims
    Gather,              // inputs: an initializer table [V, ...] and a value of integer ids (axis 0: an embedding lookup,
                         //   -> ids' shape + [...]); or a value and `ints` constant indices along `axis` >= 1
                         //   (`scalar_index`: one index, the axis dropped, as x[:, 0])
    LayerNormalization,  // inputs: x, scale [D], bias [D]: over the last axis (D of them); attr: epsilon
    Reshape,             // inputs: x; `ints`: the per-example shape it becomes (the same number of values)
    Transpose,           // inputs: x; `ints`: the permutation of the whole tensor's axes, the batch's (0) first
    Erf,                 // inputs: x (a GELU's error function)
    Concat,              // inputs: values of the same shape but along `axis` (>= 1, of the whole tensor)
};

// The ONNX op_type of a kind ("Conv", "Gemm", ...), and back.
const char* opKindName(OpKind kind);
std::optional<OpKind> parseOpKind(std::string_view onnxOpType);

struct Node {
    std::string name;                 // unique within the graph ("dense_1", "bottleneck_4/conv_b")
    OpKind kind = OpKind::Relu;
    std::vector<std::string> inputs;  // value or initializer names
    std::string output;               // the value it writes
    // Conv / MaxPool / AveragePool windows: kernel, stride and the top padding of the height; the
    // width's, the other sides' padding and Conv's dilation default to them (0 or -1: "the same"), so
    // a square window with symmetric padding (what the engine's layers make) sets only these three.
    int64_t kernel = 0, stride = 1, pad = 0;
    int64_t kernel_w = 0, stride_w = 0;                 // 0: kernel, stride
    int64_t pad_left = -1, pad_bottom = -1, pad_right = -1;  // -1: pad
    int64_t dilation = 1, dilation_w = 0;               // Conv: 1 = dense; dilation_w 0: dilation
    // Conv: input and output channels split into `group` independent convolutions (depthwise:
    // group = input channels); the weight is [filters, channels / group, kernel, kernel].
    int64_t group = 1;
    float clip_min = 0.0f, clip_max = 6.0f;  // Clip: min(max(x, clip_min), clip_max)
    // AveragePool: padded cells count in the divisor (ONNX count_include_pad = 1) or not (0, its default).
    bool count_include_pad = false;
    float epsilon = 1e-5f;            // BatchNormalization
    // BatchNormalization in training (not at inference): running = momentum * running + (1 - momentum)
    // * batch statistic, ONNX's convention (PyTorch's momentum 0.1 exports as 0.9).
    float momentum = 0.9f;
    bool fused_relu = false;          // Conv / Gemm / BatchNormalization / Add: ReLU applied to the output
    // Gather and Concat: the axis of the whole tensor (the batch's is 0), as ONNX numbers it (not negative).
    int64_t axis = 0;
    // Reshape: the per-example shape; Transpose: the permutation (perm); Gather of a value: its indices.
    std::vector<int64_t> ints{};
    bool scalar_index = false;        // Gather of a value: one index, its axis removed

    int64_t kernelW() const { return kernel_w > 0 ? kernel_w : kernel; }
    int64_t strideW() const { return stride_w > 0 ? stride_w : stride; }
    int64_t padLeft() const { return pad_left >= 0 ? pad_left : pad; }
    int64_t padBottom() const { return pad_bottom >= 0 ? pad_bottom : pad; }
    int64_t padRight() const { return pad_right >= 0 ? pad_right : pad; }
    int64_t dilationW() const { return dilation_w > 0 ? dilation_w : dilation; }
    // A square kernel and stride, the same padding on every side, no dilation: what the engine's
    // layers, int8 and the training mapping take.
    bool squareWindow() const {
        return kernelW() == kernel && strideW() == stride && padLeft() == pad && padBottom() == pad && padRight() == pad &&
               dilation == 1 && dilationW() == 1;
    }
    // "3x1 kernel, stride 2x2, pads 0,1,1,0 (top, left, bottom, right), dilation 2x2" (what differs
    // from a square window), for errors.
    std::string windowText() const;
};

struct Initializer {
    Dims dims;
    std::vector<float> values;        // row-major, dims' product of them
};

// What a served model needs beyond its ops.
struct GraphMetadata {
    std::string producer = "trainbench";
    std::string source_run;           // "run 12 of /path/runs.db" or the ONNX file it came from
    // Pixels arrive as stored (0..255 for images) and are multiplied by input_scale then shifted by
    // input_shift before the first op (Fashion-MNIST: scale 1/255, shift 0).
    float input_scale = 1.0f, input_shift = 0.0f;
    std::vector<std::string> class_names;  // index -> name; empty: the index is the name
};

struct Graph {
    std::string input;                // the input value's name
    Dims sample_shape;                // per-example input shape, {C, H, W}, {features} or {sequence}
    // The input holds integer ids (ONNX INT64: a transformer's tokens), carried as floats (exact to
    // 2^24) and read by a Gather; false: float values.
    bool integer_input = false;
    std::string output;               // the logits' value name, [N, classes]
    int64_t classes = 0;
    std::vector<Node> nodes;          // in execution order; a node reads only the input, initializers and earlier outputs
    std::map<std::string, Initializer> initializers;
    GraphMetadata metadata;
    // An ONNX model stripped to shapes (onnx::readOnnx with shapes_only): initializers may hold no
    // values, only their dims. Only op counting (graphops.h, for estimates) takes such a graph.
    bool weightless = false;

    // Checks the graph's wiring and shapes (every input defined before use, initializer dims fit
    // the op, the output has `classes` features); throws GraphError naming the node.
    void validate() const;
    // Per-example shape of every value, from sample_shape (validate() uses it). GraphError naming
    // the node whose inputs do not fit.
    std::map<std::string, Dims> valueShapes() const;
    // The values of every initializer (what the model weighs, folded or not).
    int64_t parameterCount() const;
    // The initializer `name`; GraphError naming `node` when there is none.
    const Initializer& initializer(const std::string& name, const std::string& node) const;
};

}  // namespace trainbench::engine::graph
