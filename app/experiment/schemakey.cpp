#include "app/experiment/schemakey.h"

#include "app/experiment/suggest.h"
#include "profiler/format/numberformat.h"

namespace trainbench::app {

const SchemaKey* SchemaKey::find(const std::string& name) const {
    for (const SchemaKey& k : keys)
        if (k.key == name) return &k;
    return nullptr;
}

std::vector<std::string> SchemaKey::keyNames() const {
    std::vector<std::string> names;
    for (const SchemaKey& k : keys) names.push_back(k.key);
    return names;
}

std::string SchemaKey::expectedText() const {
    switch (type) {
        case SchemaType::Object: return "an object";
        case SchemaType::String:
        case SchemaType::Path: return nonEmpty ? "a non-empty string" : "a string";
        case SchemaType::Boolean: return "true or false";
        case SchemaType::Integer:
            if (minimum && ((!exclusiveMinimum && *minimum >= 1) || (exclusiveMinimum && *minimum >= 0)))
                return "a positive integer";
            if (minimum && !exclusiveMinimum && *minimum == 0) return "a non-negative integer";
            return "an integer";
        case SchemaType::Number: return "a number";
        case SchemaType::Enum: return "one of " + quotedList(choices);
        case SchemaType::Layers: return "a non-empty array of layers";
        case SchemaType::Sweep: return "an object of key paths and their values, e.g. {\"strategy.replicas\": [1, 2, 4]}";
    }
    return "a value";
}

std::string SchemaKey::rangeText() const {
    switch (type) {
        case SchemaType::Integer:
        case SchemaType::Number: {
            std::string out;
            if (minimum) out += (exclusiveMinimum ? "> " : ">= ") + profiler::shortestNumber(*minimum);
            if (maximum) out += (out.empty() ? "" : " and ") + std::string(exclusiveMaximum ? "< " : "<= ") + profiler::shortestNumber(*maximum);
            return out;
        }
        case SchemaType::String:
        case SchemaType::Path: return nonEmpty ? "non-empty" : "";
        case SchemaType::Enum: return quotedList(choices);
        case SchemaType::Layers: return "non-empty";
        default: return "";
    }
}

std::string SchemaKey::defaultText() const {
    if (required) return "required";
    if (!defaultFrom.empty()) return "same as " + defaultFrom;
    if (!defaultNote.empty()) return defaultNote;
    if (defaultValue.is_null()) return "none";
    if (defaultValue.is_number()) return profiler::shortestNumber(defaultValue.get<double>());
    return defaultValue.dump();
}

bool SchemaKey::inRange(double value) const {
    if (minimum && (exclusiveMinimum ? value <= *minimum : value < *minimum)) return false;
    if (maximum && (exclusiveMaximum ? value >= *maximum : value > *maximum)) return false;
    return true;
}

nlohmann::json SchemaKey::toJson() const {
    nlohmann::json j;
    j["key"] = key;
    j["type"] = schemaTypeName(type);
    j["description"] = description;
    j["default"] = defaultValue;
    j["default_text"] = defaultText();
    j["required"] = required;
    if (!defaultFrom.empty()) j["default_from"] = defaultFrom;
    if (minimum) { j["minimum"] = *minimum; j["exclusive_minimum"] = exclusiveMinimum; }
    if (maximum) { j["maximum"] = *maximum; j["exclusive_maximum"] = exclusiveMaximum; }
    if (const std::string range = rangeText(); !range.empty()) j["range"] = range;
    if (!choices.empty()) j["choices"] = choices;
    if (!keys.empty()) {
        j["keys"] = nlohmann::json::array();
        for (const SchemaKey& k : keys) j["keys"].push_back(k.toJson());
    }
    if (!oneOf.empty()) j["one_of"] = oneOf;
    if (!layerTypes.empty()) {
        j["layer_types"] = nlohmann::json::array();
        for (const LayerType& t : layerTypes) {
            nlohmann::json lt = {{"type", t.name}, {"description", t.description}, {"keys", nlohmann::json::array()}};
            for (const SchemaKey& k : t.keys) lt["keys"].push_back(k.toJson());
            j["layer_types"].push_back(std::move(lt));
        }
    }
    return j;
}

const SchemaKey* LayerType::find(const std::string& key) const {
    for (const SchemaKey& k : keys)
        if (k.key == key) return &k;
    return nullptr;
}

std::vector<std::string> LayerType::keyNames() const {
    std::vector<std::string> names{"type"};
    for (const SchemaKey& k : keys) names.push_back(k.key);
    return names;
}

std::string describeValue(const nlohmann::json& value) {
    switch (value.type()) {
        case nlohmann::json::value_t::string: {
            std::string s = value.get<std::string>();
            if (s.size() > 60) s = s.substr(0, 57) + "...";
            return "string " + nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        }
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned:
        case nlohmann::json::value_t::number_float: return "number " + value.dump();
        case nlohmann::json::value_t::boolean: return value.get<bool>() ? "true" : "false";
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::array: return value.empty() ? "an empty array" : "an array";
        case nlohmann::json::value_t::object: return "an object";
        default: return "an unusable value";
    }
}

const char* schemaTypeName(SchemaType type) {
    switch (type) {
        case SchemaType::Object: return "object";
        case SchemaType::String: return "string";
        case SchemaType::Path: return "path";
        case SchemaType::Boolean: return "boolean";
        case SchemaType::Integer: return "integer";
        case SchemaType::Number: return "number";
        case SchemaType::Enum: return "enum";
        case SchemaType::Layers: return "layers";
        case SchemaType::Sweep: return "sweep";
    }
    return "?";
}

}  // namespace trainbench::app
