#pragma once
// The metadata_props values' text: floats in the shortest decimal that reads back to the same float,
// class names as a JSON array of strings.
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::engine::onnx {

std::string floatText(float value);
// OnnxError naming `where` ("model.onnx: metadata 'trainbench.input_scale'") unless `text` is one
// finite float.
float parseFloatText(const std::string& text, const std::string& where);

// Doubles the same way (shortest decimal that reads back to the same double), and integers.
std::string doubleText(double value);
double parseDoubleText(const std::string& text, const std::string& where);
// OnnxError naming `where` unless `text` is one integer in [lowest, highest].
int64_t parseIntText(const std::string& text, const std::string& where, int64_t lowest, int64_t highest);
uint64_t parseUnsignedText(const std::string& text, const std::string& where);

std::string classNamesText(const std::vector<std::string>& names);
// OnnxError naming `where` unless `text` is a JSON array of strings.
std::vector<std::string> parseClassNames(const std::string& text, const std::string& where);

}  // namespace trainbench::engine::onnx
