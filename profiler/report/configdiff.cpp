#include "engine/util/keypath.h"
#include "profiler/report/configdiff.h"

#include <map>

namespace trainbench::profiler {

namespace {

void flatten(const nlohmann::json& v, const std::string& path, std::vector<std::pair<std::string, std::string>>& out) {
    if (v.is_object() && !v.empty()) {
        for (const auto& [key, child] : v.items()) flatten(child, engine::keyPathMember(path, key), out);
    } else if (v.is_array() && !v.empty()) {
        for (size_t i = 0; i < v.size(); ++i) flatten(v[i], engine::keyPathElement(path, i), out);
    } else {
        out.emplace_back(path, v.dump());
    }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flattenJson(const nlohmann::json& value) {
    std::vector<std::pair<std::string, std::string>> out;
    flatten(value, "", out);
    return out;
}

std::vector<ConfigDiffRow> configDiff(const std::vector<std::string>& configJsons) {
    std::map<std::string, std::vector<std::optional<std::string>>> keys;  // sorted by key path
    for (size_t run = 0; run < configJsons.size(); ++run) {
        nlohmann::json j = nlohmann::json::parse(configJsons[run], nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded()) j = nlohmann::json::object();
        for (auto& [key, text] : flattenJson(j)) {
            auto& values = keys[key];
            values.resize(configJsons.size());
            values[run] = std::move(text);
        }
    }
    std::vector<ConfigDiffRow> rows;
    for (auto& [key, values] : keys) {
        bool same = true;
        for (const auto& v : values) same = same && v == values.front();
        if (!same) rows.push_back({key, std::move(values)});
    }
    return rows;
}

}  // namespace trainbench::profiler
