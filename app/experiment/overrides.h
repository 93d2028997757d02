#pragma once
// `trainbench-cli run --set key.path=value`: changes to an experiment applied before validation.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/issuelist.h"
#include "app/experiment/schemakey.h"

namespace trainbench::app {

// One step of a key path: "model.layers[2].units" is key model, key layers, index 2, key units.
struct KeyPathStep {
    std::string key;                   // empty for an index step
    std::optional<std::size_t> index;
};

// Parses "train.batch_size" or "model.layers[2].units"; nullopt (and *error set) if malformed.
std::optional<std::vector<KeyPathStep>> parseKeyPath(const std::string& text, std::string* error);

// Applies each "key.path=value" to document in order. The value is JSON if it parses as JSON
// (64, true, "x", [..], {..}), else the raw text; for string keys the raw text is always used, so
// name=2024 is the string "2024". Every key on the path is checked against the schema (unknown keys
// get the same suggestions as in files), setting one of a one-of group (model.preset / model.layers)
// removes the others, and relative Path values resolve against cwd. Bad overrides are reported in
// issues and skipped; the rest still apply, so validation can report everything at once.
void applyOverrides(nlohmann::json& document, const std::vector<std::string>& overrides, const SchemaKey& root,
                    const std::filesystem::path& cwd, IssueList& issues);

}  // namespace trainbench::app
