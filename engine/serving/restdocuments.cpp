#include "engine/serving/restdocuments.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>

namespace trainbench::engine::serving {

namespace {
using json = nlohmann::json;

void appendFloat(std::string& out, float v) {
    if (std::isnan(v)) return void(out += "NaN");
    if (std::isinf(v)) return void(out += v > 0 ? "Infinity" : "-Infinity");
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

json tensorInfo(const std::string& name, const std::vector<int64_t>& exampleShape) {
    json dims = json::array({{{"size", "-1"}, {"name", ""}}});
    for (int64_t d : exampleShape) dims.push_back({{"size", std::to_string(d)}, {"name", ""}});
    return {{"dtype", "DT_FLOAT"}, {"tensor_shape", {{"dim", dims}, {"unknown_rank", false}}}, {"name", name + ":0"}};
}
}  // namespace

std::string predictionsJson(const float* out, int64_t n, int64_t outputs, PredictRequest::Format format) {
    std::string s = format == PredictRequest::Format::Row ? "{\"predictions\": [" : "{\"outputs\": [";
    s.reserve(s.size() + static_cast<size_t>(n * (outputs * 14 + 4)));
    for (int64_t i = 0; i < n; ++i) {
        s += i ? ", [" : "[";
        for (int64_t j = 0; j < outputs; ++j) {
            if (j) s += ", ";
            appendFloat(s, out[i * outputs + j]);
        }
        s += "]";
    }
    return s + "]}";
}

std::string modelStatusJson(const Servable& servable) {
    const json status = {{"model_version_status",
                          json::array({{{"version", std::to_string(servable.version)},
                                        {"state", "AVAILABLE"},
                                        {"status", {{"error_code", "OK"}, {"error_message", ""}}}}})}};
    return status.dump(1);
}

std::string modelMetadataJson(const Servable& servable) {
    const json signature = {
        {"inputs", {{servable.inputName, tensorInfo(servable.inputName, servable.inputShape)}}},
        {"outputs", {{servable.outputName, tensorInfo(servable.outputName, {servable.outputs})}}},
        {"method_name", "tensorflow/serving/predict"}};
    const json metadata = {
        {"model_spec", {{"name", servable.name}, {"signature_name", ""}, {"version", std::to_string(servable.version)}}},
        {"metadata", {{"signature_def", {{"signature_def", {{"serving_default", signature}}}}}}}};
    return metadata.dump(1);
}

std::string errorJson(const std::string& message) {
    return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace trainbench::engine::serving
