#pragma once
// Which endpoint a request target names: TF Serving's REST paths
// (/v1/models/NAME[/versions/N][:predict | /metadata]) and /metrics. The method is checked by the
// caller against allowedMethod().
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainbench::engine::serving {

struct Route {
    enum class Kind { Predict, Status, Metadata, Metrics, Invalid };
    Kind kind = Kind::Invalid;
    std::string model;
    std::optional<int64_t> version;
    int status = 404;     // for Invalid: 404 (no such endpoint) or 400 (a malformed one)
    std::string message;  // for Invalid

    const char* allowedMethod() const { return kind == Kind::Predict ? "POST" : "GET"; }
};

Route parseRoute(std::string_view target);

}  // namespace trainbench::engine::serving
