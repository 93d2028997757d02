#pragma once
// One entry of the experiment-file schema: a key's type, range, default, meaning, and where its
// value goes in the engine's config structs. The validator, the override parser, the docs test
// and (later) the GUI's experiment form all read the same table (experimentschema.h).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/model/modelspec.h"

namespace trainbench::app {

struct Experiment;
struct LayerType;
class IssueList;

enum class SchemaType {
    Object,   // a section with its own keys
    String,
    Path,     // a string naming a file or folder; relative values are resolved (see experiment.h)
    Boolean,
    Integer,  // JSON integers; integral numbers such as 1e4 are accepted too
    Number,
    Enum,     // a string from `choices`
    Layers,   // model.layers: a non-empty array of layer objects, each typed by its "type" key
    Sweep,    // the top-level "sweep": key paths of other keys, each with the values to run (sweep.h)
};

struct SchemaKey {
    using Store = std::function<void(const nlohmann::json& value, Experiment& out)>;
    using StoreLayer = std::function<void(const nlohmann::json& value, engine::LayerSpec& out)>;
    // A rule across keys of one section, run on the section with defaults filled in.
    using Check = std::function<void(const nlohmann::json& section, const std::string& path, IssueList& issues)>;

    std::string key;
    SchemaType type = SchemaType::String;
    std::string description;

    // Filled in when the key is missing. Null means: no default (see `required`, `defaultFrom`).
    nlohmann::json defaultValue;
    // For defaults that are not a constant: the sibling key whose value is the default
    // (maxpool2d "stride" defaults to its "size"), or a text for the docs ("file name stem").
    std::string defaultFrom;
    std::string defaultNote;
    bool required = false;

    // Integer / Number bounds; String / Path: nonEmpty.
    std::optional<double> minimum, maximum;
    bool exclusiveMinimum = false, exclusiveMaximum = false;
    bool nonEmpty = false;
    std::vector<std::string> choices;  // Enum

    std::vector<SchemaKey> keys;       // Object
    std::vector<std::string> oneOf;    // Object: exactly one of these keys must be given
    std::vector<Check> checks;         // Object
    std::vector<LayerType> layerTypes; // Layers

    Store store;            // copies the validated value into Experiment (top-level sections)
    StoreLayer storeLayer;  // or into one LayerSpec (keys of a layer type)

    const SchemaKey* find(const std::string& name) const;
    std::vector<std::string> keyNames() const;

    // "a positive integer", "true or false", "one of 'adam', 'sgd'" — for "expected ..., got ...".
    std::string expectedText() const;
    // "> 0 and <= 10", ">= 1 and <= 65536", "non-empty", or "" when any value of the type is fine.
    std::string rangeText() const;
    // The default as the docs show it: "128", "true", "\"fashion-mnist\"", "same as size", "required".
    std::string defaultText() const;
    // Whether a number of this key's type lies in range (the type itself already checked).
    bool inRange(double value) const;
    // Machine-readable form for GUIs and tools: {key, type, default, range, description, ...}.
    nlohmann::json toJson() const;
};

// One value of model.layers[i].type and the keys such a layer accepts (besides "type").
struct LayerType {
    std::string name;
    engine::LayerKind kind;
    std::string description;
    std::vector<SchemaKey> keys;

    const SchemaKey* find(const std::string& key) const;
    std::vector<std::string> keyNames() const;  // "type" first, then keys
};

// What a JSON value is, for "got ..." in messages: string "128", number -0.1, true, null, an array.
std::string describeValue(const nlohmann::json& value);
const char* schemaTypeName(SchemaType type);

}  // namespace trainbench::app
