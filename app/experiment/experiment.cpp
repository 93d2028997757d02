#include "app/experiment/experiment.h"

#include <filesystem>
#include <optional>

#include "app/experiment/experimentschema.h"
#include "app/experiment/issuelist.h"
#include "app/experiment/jsontext.h"
#include "app/experiment/overrides.h"
#include "app/experiment/pathresolution.h"
#include "app/experiment/schemavalidator.h"
#include "engine/util/cappedfile.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<engine::LayerSpec> bindLayers(const SchemaKey& schema, const json& layers) {
    std::vector<engine::LayerSpec> out;
    for (const json& layer : layers) {
        for (const LayerType& type : schema.layerTypes) {
            if (type.name != layer.at("type")) continue;
            engine::LayerSpec spec;
            spec.kind = type.kind;
            for (const SchemaKey& key : type.keys)
                if (auto it = layer.find(key.key); it != layer.end() && key.storeLayer) key.storeLayer(*it, spec);
            out.push_back(spec);
        }
    }
    return out;
}

// Copies a validated, resolved section into the engine structs through each key's store function.
void bindSection(const SchemaKey& section, const json& resolved, Experiment& out) {
    for (const SchemaKey& key : section.keys) {
        const auto it = resolved.find(key.key);
        if (it == resolved.end()) continue;
        if (key.type == SchemaType::Object) {
            bindSection(key, *it, out);
        } else if (key.type == SchemaType::Layers) {
            out.model.preset.clear();
            out.model.layers = bindLayers(key, *it);
        } else if (key.store) {
            key.store(*it, out);
        }
    }
}

}  // namespace

std::string readExperimentFile(const std::string& path) {
    std::string error;
    std::optional<std::string> text = engine::readCappedFile(path, kExperimentLimits.maxBytes, &error);
    if (!text) throw ExperimentError(path, {{"", error}});
    return std::move(*text);
}

Experiment loadExperimentFile(const std::string& path, const std::vector<std::string>& overrides) {
    Experiment experiment = parseExperiment(readExperimentFile(path), path, overrides);
    experiment.source_path = fs::absolute(path).lexically_normal().string();
    return experiment;
}

Experiment parseExperiment(const std::string& text, const std::string& sourceName,
                           const std::vector<std::string>& overrides) {
    const std::string source = sourceName.empty() ? std::string("experiment") : sourceName;
    const SchemaKey& schema = experimentSchema();
    IssueList issues;

    json document = parseJsonText(text, source, issues);
    if (document.is_discarded()) throw ExperimentError(source, issues.items());

    const fs::path cwd = fs::current_path();
    const fs::path folder = fs::path(source).parent_path();
    resolveRelativePaths(document, schema, folder.empty() ? cwd : fs::absolute(folder).lexically_normal());
    applyOverrides(document, overrides, schema, cwd, issues);

    json resolved = SchemaValidator(issues).resolve(schema, document);
    if (!issues.empty()) throw ExperimentError(source, issues.items());

    Experiment experiment;
    if (!resolved.contains("name")) {
        const std::string stem = fs::path(source).stem().string();
        resolved["name"] = stem.empty() ? std::string("experiment") : stem;
    }
    bindSection(schema, resolved, experiment);
    experiment.source_path = sourceName;
    experiment.resolved = std::move(resolved);
    return experiment;
}

}  // namespace trainbench::app
