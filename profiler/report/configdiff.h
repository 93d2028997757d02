#pragma once
// Which experiment keys differ between runs: each run's resolved config (runs.config_json)
// flattened to key paths as `--set` writes them (train.batch_size, model.layers[1].units).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainbench::profiler {

// Leaves of a JSON value as (key path, compact JSON text), in document order. Empty objects and
// arrays are leaves ("{}", "[]").
std::vector<std::pair<std::string, std::string>> flattenJson(const nlohmann::json& value);

struct ConfigDiffRow {
    std::string key;
    std::vector<std::optional<std::string>> values;  // per run, in order; nullopt: the key is absent
};

// The keys whose values are not the same in every run, sorted by key path. Text that is not JSON
// counts as an empty experiment.
std::vector<ConfigDiffRow> configDiff(const std::vector<std::string>& configJsons);

}  // namespace trainbench::profiler
