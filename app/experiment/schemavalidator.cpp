#include "app/experiment/schemavalidator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "app/experiment/experimentschema.h"
#include "app/experiment/suggest.h"
#include "app/experiment/sweep.h"
#include "engine/util/keypath.h"

namespace trainbench::app {

using nlohmann::json;

std::string joinKeyPath(const std::string& parent, const std::string& key) {
    return engine::keyPathMember(parent, key);
}

json SchemaValidator::resolve(const SchemaKey& root, const json& document) {
    root_ = &root;
    if (!document.is_object()) {
        issues_.add("", "expected a JSON object { ... } at the top level, got " + describeValue(document));
        return json::object();
    }
    return resolveObject(root, document, "");
}

json SchemaValidator::resolveObject(const SchemaKey& schema, const json& value, const std::string& path) {
    const std::size_t issuesBefore = issues_.size();
    const std::vector<std::string> known = schema.keyNames();
    for (const auto& [key, item] : value.items())
        if (!schema.find(key)) issues_.add(joinKeyPath(path, key), unknownKeyMessage(key, known));

    if (!schema.oneOf.empty()) {
        const auto given = std::count_if(schema.oneOf.begin(), schema.oneOf.end(),
                                         [&](const std::string& k) { return value.contains(k); });
        if (given == 0) issues_.add(path, "give one of " + quotedList(schema.oneOf));
        if (given > 1) issues_.add(path, "give only one of " + quotedList(schema.oneOf) + ", not several");
    }

    json out = json::object();
    resolveFields(schema.keys, value, path, out);
    // Cross-key rules need every value valid and present; otherwise they would only add noise.
    if (issues_.size() == issuesBefore)
        for (const SchemaKey::Check& check : schema.checks) check(out, path, issues_);
    return out;
}

void SchemaValidator::resolveFields(const std::vector<SchemaKey>& keys, const json& value, const std::string& path,
                                    json& out) {
    for (const SchemaKey& key : keys) {
        const std::string where = joinKeyPath(path, key.key);
        if (value.contains(key.key)) {
            if (auto resolved = resolveValue(key, value.at(key.key), where)) out[key.key] = std::move(*resolved);
        } else if (key.required) {
            if (key.type == SchemaType::Object && !key.oneOf.empty())
                issues_.add(where, "missing; give a " + key.key + " section with one of " + quotedList(key.oneOf));
            else
                issues_.add(where, "missing; expected " + key.expectedText());
        } else if (key.type == SchemaType::Object) {
            out[key.key] = resolveObject(key, json::object(), where);
        } else if (!key.defaultValue.is_null()) {
            out[key.key] = key.defaultValue;
        }
    }
    // Defaults taken from a sibling (maxpool2d stride = size) once the sibling is resolved.
    for (const SchemaKey& key : keys)
        if (!key.defaultFrom.empty() && !out.contains(key.key) && out.contains(key.defaultFrom))
            out[key.key] = out[key.defaultFrom];
}

std::optional<json> SchemaValidator::resolveValue(const SchemaKey& key, const json& value, const std::string& path) {
    switch (key.type) {
        case SchemaType::Object:
            if (!value.is_object()) break;
            return resolveObject(key, value, path);
        case SchemaType::String:
        case SchemaType::Path:
            if (!value.is_string()) break;
            if (key.nonEmpty && value.get<std::string>().empty()) {
                issues_.add(path, "must not be empty");
                return std::nullopt;
            }
            return value;
        case SchemaType::Boolean:
            if (!value.is_boolean()) break;
            return value;
        case SchemaType::Integer: return resolveInteger(key, value, path);
        case SchemaType::Number:
            if (!value.is_number()) break;
            if (!key.inRange(value.get<double>())) {
                rangeIssue(key, value, path);
                return std::nullopt;
            }
            return value;
        case SchemaType::Enum:
            if (!value.is_string()) break;
            if (!checkEnum("", key.choices, value, path)) return std::nullopt;
            return value;
        case SchemaType::Layers: return resolveLayers(key, value, path);
        case SchemaType::Sweep:
            if (!value.is_object()) break;
            checkSweep(value, path);
            return std::nullopt;  // not part of the resolved experiment: each point is a run of its own
    }
    typeIssue(key, value, path);
    return std::nullopt;
}

std::optional<json> SchemaValidator::resolveInteger(const SchemaKey& key, const json& value, const std::string& path) {
    // Keys map to int64 fields (seed to uint64, but seeds above 2^63 buy nothing).
    constexpr double kLimit = 9223372036854775808.0;  // 2^63
    json integral;
    if (value.is_number_unsigned()) {
        if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            issues_.add(path, "must be <= 9223372036854775807, got " + value.dump());
            return std::nullopt;
        }
        integral = value.get<std::int64_t>();
    } else if (value.is_number_integer()) {
        integral = value;
    } else if (value.is_number_float()) {
        // 1e4 or 128.0 are integers written as numbers; 1.5 is not.
        const double d = value.get<double>();
        if (!std::isfinite(d) || std::trunc(d) != d) {
            typeIssue(key, value, path);
            return std::nullopt;
        }
        if (d >= kLimit || d < -kLimit) {
            issues_.add(path, "must be <= 9223372036854775807, got " + value.dump());
            return std::nullopt;
        }
        integral = static_cast<std::int64_t>(d);
    } else {
        typeIssue(key, value, path);
        return std::nullopt;
    }
    if (!key.inRange(static_cast<double>(integral.get<std::int64_t>()))) {
        rangeIssue(key, value, path);
        return std::nullopt;
    }
    return integral;
}

std::optional<json> SchemaValidator::resolveLayers(const SchemaKey& key, const json& value, const std::string& path) {
    if (!value.is_array()) {
        typeIssue(key, value, path);
        return std::nullopt;
    }
    if (value.empty()) {
        issues_.add(path, "must not be empty; give at least one layer, e.g. [{\"type\": \"flatten\"}, "
                          "{\"type\": \"dense\", \"units\": 10}]");
        return std::nullopt;
    }
    json out = json::array();
    bool ok = true;
    for (std::size_t i = 0; i < value.size(); ++i) {
        auto layer = resolveLayer(key, value[i], engine::keyPathElement(path, i));
        ok = ok && layer.has_value();
        if (layer) out.push_back(std::move(*layer));
    }
    if (!ok) return std::nullopt;
    return out;
}

std::optional<json> SchemaValidator::resolveLayer(const SchemaKey& key, const json& value, const std::string& path) {
    std::vector<std::string> typeNames;
    for (const LayerType& t : key.layerTypes) typeNames.push_back(t.name);
    if (!value.is_object()) {
        issues_.add(path, "expected a layer object such as {\"type\": \"relu\"}, got " + describeValue(value));
        return std::nullopt;
    }
    if (!value.contains("type")) {
        issues_.add(path + ".type", "missing; every layer needs a type, one of " + quotedList(typeNames));
        return std::nullopt;
    }
    const json& type = value.at("type");
    if (!type.is_string()) {
        issues_.add(path + ".type", "expected one of " + quotedList(typeNames) + ", got " + describeValue(type));
        return std::nullopt;
    }
    if (!checkEnum("layer type", typeNames, type, path + ".type")) return std::nullopt;
    const LayerType& layerType =
        *std::find_if(key.layerTypes.begin(), key.layerTypes.end(), [&](const LayerType& t) { return t.name == type; });

    const std::size_t issuesBefore = issues_.size();
    const std::vector<std::string> known = layerType.keyNames();
    for (const auto& [name, item] : value.items())
        if (name != "type" && !layerType.find(name))
            issues_.add(engine::keyPathMember(path, name), unknownKeyMessage(name, known, "for a " + layerType.name + " layer"));
    json out = {{"type", layerType.name}};
    resolveFields(layerType.keys, value, path, out);
    if (issues_.size() != issuesBefore) return std::nullopt;
    return out;
}

void SchemaValidator::checkSweep(const json& value, const std::string& path) {
    // The size first: every value is compared with those before it, so a list of 10^5 values alone
    // would take 10^10 comparisons (and each value would make a point).
    std::vector<std::size_t> lengths;
    for (const auto& item : value.items())
        if (item.value().is_array()) lengths.push_back(item.value().size());
    if (sweepPointCount(lengths) > kMaxSweepPoints) {
        issues_.add(path, sweepTooLargeMessage());
        return;
    }
    for (const auto& [keyPath, values] : value.items()) {
        const std::string where = joinKeyPath(path, keyPath);
        std::string error;
        const SchemaKey* key = sweepKey(*root_, keyPath, &error);
        if (!key) {
            issues_.add(where, error);
            continue;
        }
        if (!values.is_array() || values.empty()) {
            issues_.add(where, "expected a non-empty array of values, e.g. [1, 2, 4], got " + describeValue(values));
            continue;
        }
        for (std::size_t i = 0; i < values.size(); ++i) {
            const std::string at = engine::keyPathElement(where, i);
            const auto valid = resolveValue(*key, values[i], at);
            // Two equal values would make two identical runs under one name.
            if (valid && std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) !=
                             values.begin() + static_cast<std::ptrdiff_t>(i))
                issues_.add(at, "repeats the value " + values[i].dump() + "; each value is one run, give it once");
        }
    }
}

bool SchemaValidator::checkEnum(const std::string& what, const std::vector<std::string>& choices, const json& value,
                                const std::string& path) {
    const std::string s = value.get<std::string>();
    if (std::find(choices.begin(), choices.end(), s) != choices.end()) return true;
    std::string message = (what.empty() ? std::string("unknown value") : "unknown " + what) + " '" + s +
                          "'; must be one of " + quotedList(choices);
    if (const auto match = closestMatch(s, choices)) message += "; did you mean '" + *match + "'?";
    issues_.add(path, message);
    return false;
}

void SchemaValidator::typeIssue(const SchemaKey& key, const json& value, const std::string& path) {
    issues_.add(path, "expected " + key.expectedText() + ", got " + describeValue(value));
}

void SchemaValidator::rangeIssue(const SchemaKey& key, const json& value, const std::string& path) {
    issues_.add(path, "must be " + key.rangeText() + ", got " + value.dump());
}

}  // namespace trainbench::app
