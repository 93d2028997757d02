#include "engine/emulation/catalogreader.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace trainbench::engine::catalog {

namespace {

std::string lowered(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    return s;
}

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), ignoring case.
std::size_t editDistance(const std::string& a, const std::string& b) {
    const std::string x = lowered(a), y = lowered(b);
    std::vector<std::size_t> prev2(y.size() + 1), prev(y.size() + 1), cur(y.size() + 1);
    for (std::size_t j = 0; j <= y.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= x.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= y.size(); ++j) {
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1])
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);
        }
        prev2.swap(prev);
        prev.swap(cur);
    }
    return prev[y.size()];
}

}  // namespace

std::string describe(const json& value) {
    if (value.is_null()) return "null";
    if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
    if (value.is_number()) return "a number " + value.dump();
    if (value.is_string()) return "a string " + value.dump();
    if (value.is_array()) return value.empty() ? "an empty array" : "an array";
    return "an object";
}

std::optional<std::string> closestMatch(const std::string& word, const std::vector<std::string>& candidates) {
    // A typo is one edit in a short key, about a third of the length in a long one.
    const std::size_t tolerance = word.size() <= 3 ? 1 : word.size() <= 6 ? 2 : word.size() / 3;
    std::optional<std::string> best;
    std::size_t bestDistance = tolerance + 1;
    for (const std::string& candidate : candidates) {
        const std::size_t d = editDistance(word, candidate);
        if (d < bestDistance) {
            best = candidate;
            bestDistance = d;
        }
    }
    return best;
}

std::string quotedList(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "'" : ", '") + item + "'";
    return out;
}

std::optional<double> readNumber(const json& value, const std::string& path, const std::string& what, Bound bound,
                                 std::vector<CatalogIssue>& issues) {
    const char* range = bound == Bound::Positive ? "a number > 0" : "a number >= 0";
    if (!value.is_number()) {
        issues.push_back({path, std::string("expected ") + range + " (" + what + "), got " + describe(value)});
        return std::nullopt;
    }
    const double v = value.get<double>();
    if (!std::isfinite(v) || (bound == Bound::Positive ? !(v > 0.0) : !(v >= 0.0))) {
        issues.push_back({path, std::string("expected ") + range + " (" + what + "), got " + value.dump()});
        return std::nullopt;
    }
    return v;
}

ObjectReader::ObjectReader(const json& node, std::string path, std::vector<std::string> known,
                           std::vector<CatalogIssue>& issues)
    : path_(std::move(path)), known_(std::move(known)), issues_(issues) {
    if (node.is_object())
        object_ = &node;
    else
        issue(path_.empty() ? "(top level)" : path_, "expected an object, got " + describe(node));
}

const json* ObjectReader::required(const std::string& key, const std::string& what) {
    if (!object_) return nullptr;
    const auto it = object_->find(key);
    if (it == object_->end()) {
        issue(path_.empty() ? "(top level)" : path_, "missing key '" + key + "' (" + what + ")");
        return nullptr;
    }
    return &*it;
}

std::optional<double> ObjectReader::number(const std::string& key, const std::string& what, Bound bound) {
    const json* v = required(key, what);
    return v ? readNumber(*v, pathOf(key), what, bound, issues_) : std::nullopt;
}

std::optional<int> ObjectReader::integer(const std::string& key, const std::string& what, int minimum) {
    const json* v = required(key, what);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() || v->get<long long>() < minimum || v->get<long long>() > 1'000'000'000) {
        issue(pathOf(key),
              "expected a whole number >= " + std::to_string(minimum) + " (" + what + "), got " + describe(*v));
        return std::nullopt;
    }
    return static_cast<int>(v->get<long long>());
}

std::optional<std::string> ObjectReader::string(const std::string& key, const std::string& what,
                                                const std::vector<std::string>& choices) {
    const json* v = required(key, what);
    if (!v) return std::nullopt;
    if (!v->is_string() || v->get<std::string>().empty()) {
        issue(pathOf(key), "expected a non-empty string (" + what + "), got " + describe(*v));
        return std::nullopt;
    }
    const std::string s = v->get<std::string>();
    if (!choices.empty() && std::find(choices.begin(), choices.end(), s) == choices.end()) {
        std::string message = "unknown value '" + s + "' (" + what + "); must be one of " + quotedList(choices);
        if (const auto match = closestMatch(s, choices)) message += "; did you mean '" + *match + "'?";
        issue(pathOf(key), message);
        return std::nullopt;
    }
    return s;
}

void ObjectReader::finish() {
    if (!object_) return;
    for (const auto& item : object_->items()) {
        const std::string& key = item.key();
        if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
        std::string message = "unknown key";
        if (const auto match = closestMatch(key, known_))
            message += "; did you mean '" + *match + "'?";
        else
            message += "; known keys here: " + quotedList(known_);
        issue(pathOf(key), message);
    }
}

}  // namespace trainbench::engine::catalog
