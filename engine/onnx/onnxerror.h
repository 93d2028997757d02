#pragma once
// An ONNX file that cannot become (or a graph that cannot become) an ONNX model: the message names
// the file, and the node, initializer or field that failed ("model.onnx: node 'conv_0' (Conv):
// group 2 is not supported").
#include <stdexcept>

namespace trainbench::engine::onnx {

class OnnxError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace trainbench::engine::onnx
