#pragma once
// The metadata_props values' text: floats in the shortest decimal that reads back to the same float,
// class names as a JSON array of strings.
#include <string>
#include <vector>

namespace trainbench::engine::onnx {

std::string floatText(float value);
// OnnxError naming `where` ("model.onnx: metadata 'trainbench.input_scale'") unless `text` is one
// finite float.
float parseFloatText(const std::string& text, const std::string& where);

std::string classNamesText(const std::vector<std::string>& names);
// OnnxError naming `where` unless `text` is a JSON array of strings.
std::vector<std::string> parseClassNames(const std::string& text, const std::string& where);

}  // namespace trainbench::engine::onnx
