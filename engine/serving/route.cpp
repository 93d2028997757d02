#include "engine/serving/route.h"

#include <vector>

namespace trainbench::engine::serving {

namespace {
Route invalid(int status, std::string message) {
    Route r;
    r.status = status;
    r.message = std::move(message);
    return r;
}

std::vector<std::string_view> split(std::string_view s) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == '/') {
            parts.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    return parts;
}

std::optional<int64_t> versionNumber(std::string_view text) {
    if (text.empty() || text.size() > 18) return std::nullopt;
    int64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}
}  // namespace

Route parseRoute(std::string_view target) {
    const std::string_view path = target.substr(0, target.find('?'));
    if (path == "/metrics") return Route{Route::Kind::Metrics, {}, {}, 200, {}};
    constexpr std::string_view kModels = "/v1/models/";
    if (path.substr(0, kModels.size()) != kModels)
        return invalid(404, "no endpoint " + std::string(path) +
                                ": expected /v1/models/NAME[/versions/N][:predict|/metadata] or /metrics");
    std::string_view rest = path.substr(kModels.size());
    std::string_view verb;
    if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
        verb = rest.substr(colon + 1);
        rest = rest.substr(0, colon);
    }
    std::vector<std::string_view> parts = split(rest);
    Route r;
    r.model = std::string(parts[0]);
    if (r.model.empty()) return invalid(404, "no model name in " + std::string(path));
    bool metadata = false;
    if (parts.size() >= 2 && parts.back() == "metadata") {
        metadata = true;
        parts.pop_back();
    }
    if (parts.size() == 3 && parts[1] == "labels")
        return invalid(400, "version labels are not supported: use /v1/models/" + r.model + "/versions/N");
    if (parts.size() == 3 && parts[1] == "versions") {
        r.version = versionNumber(parts[2]);
        if (!r.version) return invalid(400, "version \"" + std::string(parts[2]) + "\": expected a number");
    } else if (parts.size() != 1) {
        return invalid(404, "no endpoint " + std::string(path));
    }
    if (!verb.empty()) {
        if (metadata) return invalid(404, "no endpoint " + std::string(path));
        if (verb == "classify" || verb == "regress")
            return invalid(400, ":" + std::string(verb) + " is not served: the model has only a predict signature");
        if (verb != "predict") return invalid(404, "no method :" + std::string(verb) + ", expected :predict");
        r.kind = Route::Kind::Predict;
    } else {
        r.kind = metadata ? Route::Kind::Metadata : Route::Kind::Status;
    }
    return r;
}

}  // namespace trainbench::engine::serving
