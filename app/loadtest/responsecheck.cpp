#include "app/loadtest/responsecheck.h"

#include <nlohmann/json.hpp>

namespace trainbench::app::loadtest {

namespace {

std::string clipped(std::string_view text) {
    constexpr size_t kMax = 200;
    return text.size() <= kMax ? std::string(text) : std::string(text.substr(0, kMax)) + "…";
}

}  // namespace

ResponseVerdict checkPredictResponse(int status, std::string_view body, int expectedPredictions) {
    const auto doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (status != 200) {
        std::string said = clipped(body);
        if (doc.is_object() && doc.contains("error") && doc["error"].is_string()) said = clipped(doc["error"].get<std::string>());
        return {"HTTP " + std::to_string(status), "HTTP " + std::to_string(status) + ": " + said};
    }
    if (doc.is_discarded()) return {"bad response", "the response body is not JSON: " + clipped(body)};
    if (!doc.is_object() || !doc.contains("predictions") || !doc["predictions"].is_array())
        return {"bad response", "the response has no \"predictions\" array: " + clipped(body)};
    const size_t got = doc["predictions"].size();
    if (got != static_cast<size_t>(expectedPredictions))
        return {"bad response", "\"predictions\" has " + std::to_string(got) + " entries, expected " +
                                    std::to_string(expectedPredictions) + " (one per instance sent)"};
    return {};
}

}  // namespace trainbench::app::loadtest
