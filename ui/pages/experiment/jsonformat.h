#pragma once
// Experiment files as people write them: two-space indents, one key per line, but short arrays of
// values ([1, 2, 4]) and each layer ({"type": "conv2d", "filters": 32}) on one line.
#include <string>

#include <nlohmann/json.hpp>

namespace trainbench::ui {

std::string formatExperimentJson(const nlohmann::ordered_json& document);

}  // namespace trainbench::ui
