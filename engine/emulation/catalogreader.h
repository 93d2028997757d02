#pragma once
// Reading the device catalog's JSON objects with every problem collected by key path: a required
// key that is missing, a value of the wrong type or range, a key nobody asked for (with the closest
// known key as a suggestion). Internal to devicecatalog.cpp and devicereader.cpp.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/emulation/devicecatalog.h"
#include "engine/util/keypath.h"

namespace trainbench::engine::catalog {

using nlohmann::json;

// "a string \"fast\"", "a number -5", "null", "an object", ...: what a value was, for messages.
std::string describe(const json& value);
// The closest of `candidates` to a misspelt `word`, if it is close enough to be a typo.
std::optional<std::string> closestMatch(const std::string& word, const std::vector<std::string>& candidates);
// "'a', 'b', 'c'"
std::string quotedList(const std::vector<std::string>& items);

enum class Bound { Positive, NonNegative };

// One JSON object at a key path. Accessors read a known key (reporting it missing or malformed);
// finish() reports every key of the object that is not among `known`.
class ObjectReader {
public:
    ObjectReader(const json& node, std::string path, std::vector<std::string> known, std::vector<CatalogIssue>& issues);

    bool isObject() const { return object_ != nullptr; }
    const std::string& path() const { return path_; }
    std::string pathOf(const std::string& key) const { return keyPathMember(path_, key); }
    void issue(const std::string& path, std::string message) { issues_.push_back({path, std::move(message)}); }
    bool has(const std::string& key) const { return object_ && object_->contains(key); }

    // The value of a required key, or null after reporting it missing ("missing key 'x' (what)").
    const json* required(const std::string& key, const std::string& what);
    // A required number within `bound`; nullopt (reported) otherwise.
    std::optional<double> number(const std::string& key, const std::string& what, Bound bound);
    // A required whole number >= minimum.
    std::optional<int> integer(const std::string& key, const std::string& what, int minimum);
    // A required non-empty string; if `choices` is not empty, one of them.
    std::optional<std::string> string(const std::string& key, const std::string& what,
                                      const std::vector<std::string>& choices = {});
    // Reports keys of the object that are not known.
    void finish();

private:
    const json* object_ = nullptr;
    std::string path_;
    std::vector<std::string> known_;
    std::vector<CatalogIssue>& issues_;
};

// `value` as a number within `bound`, reported at `path` otherwise.
std::optional<double> readNumber(const json& value, const std::string& path, const std::string& what, Bound bound,
                                 std::vector<CatalogIssue>& issues);

}  // namespace trainbench::engine::catalog
