#pragma once
// Relative paths in an experiment mean "next to the experiment file" (or, for --set overrides,
// "from where the command was typed"); the run itself may start elsewhere, so they are made
// absolute before the experiment is stored or run.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "app/experiment/schemakey.h"

namespace trainbench::app {

// base / value, normalised; absolute values and empty strings are returned unchanged.
std::string resolvePath(const std::string& value, const std::filesystem::path& base);

// Applies resolvePath to every Path-typed string in value (checked against schema, which describes
// value); anything of the wrong type is left for the validator to report.
void resolveRelativePaths(nlohmann::json& value, const SchemaKey& schema, const std::filesystem::path& base);

}  // namespace trainbench::app
