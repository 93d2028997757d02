#include "engine/onnx/onnxtext.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/onnx/onnxerror.h"

namespace trainbench::engine::onnx {

std::string floatText(float value) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, r.ptr);
}

float parseFloatText(const std::string& text, const std::string& where) {
    float v = 0.0f;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v))
        throw OnnxError(where + ": '" + text.substr(0, 64) + "' is not a finite number");
    return v;
}

std::string doubleText(double value) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, r.ptr);
}

double parseDoubleText(const std::string& text, const std::string& where) {
    double v = 0.0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v))
        throw OnnxError(where + ": '" + text.substr(0, 64) + "' is not a finite number");
    return v;
}

int64_t parseIntText(const std::string& text, const std::string& where, int64_t lowest, int64_t highest) {
    int64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < lowest || v > highest)
        throw OnnxError(where + ": '" + text.substr(0, 64) + "' is not an integer in [" + std::to_string(lowest) + ", " +
                        std::to_string(highest) + "]");
    return v;
}

uint64_t parseUnsignedText(const std::string& text, const std::string& where) {
    uint64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size())
        throw OnnxError(where + ": '" + text.substr(0, 64) + "' is not an unsigned integer");
    return v;
}

std::string classNamesText(const std::vector<std::string>& names) { return nlohmann::json(names).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::vector<std::string> parseClassNames(const std::string& text, const std::string& where) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) throw OnnxError(where + ": not a JSON array of class names");
    std::vector<std::string> names;
    for (const nlohmann::json& e : j) {
        if (!e.is_string()) throw OnnxError(where + ": class " + std::to_string(names.size()) + " is not a string");
        names.push_back(e.get<std::string>());
    }
    return names;
}

}  // namespace trainbench::engine::onnx
