#include "app/experiment/overrides.h"

#include <algorithm>
#include <cctype>

#include "app/experiment/experimentschema.h"
#include "app/experiment/jsontext.h"
#include "app/experiment/pathresolution.h"
#include "app/experiment/schemavalidator.h"
#include "engine/util/keypath.h"

namespace trainbench::app {
namespace {

using nlohmann::json;

bool isKeyChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

std::string trimmed(const std::string& s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// An override as messages show it: long values cut (the message says what is wrong with them).
std::string shortened(const std::string& text) { return text.size() > 80 ? text.substr(0, 77) + "..." : text; }

// "" if `text` is valid UTF-8, else nlohmann's account of the first bad byte ("invalid UTF-8 byte at index 3: 0xFF").
std::string utf8Problem(const std::string& text) {
    try {
        (void)json(text).dump();
        return {};
    } catch (const json::type_error& e) {
        const std::string what = e.what();
        const auto bracket = what.find("] ");
        return bracket == std::string::npos ? what : what.substr(bracket + 2);
    }
}

// Where the override walk is in the schema: a section, a layer of a known type, or nowhere the
// schema can say anything about (a layer whose type is not set yet).
struct Cursor {
    const SchemaKey* key = nullptr;       // Object, Layers or a leaf
    const LayerType* layer = nullptr;     // inside model.layers[i], type known
    bool unchecked = false;               // inside model.layers[i], type unknown
};

class OverrideApplier {
public:
    OverrideApplier(json& document, const SchemaKey& root, const std::filesystem::path& cwd, IssueList& issues)
        : document_(document), root_(root), cwd_(cwd), issues_(issues) {}

    void apply(const std::string& text) {
        const std::string origin = " (in --set " + text + ")";
        const auto eq = text.find('=');
        const std::string keyText = trimmed(text.substr(0, eq));
        if (eq == std::string::npos || keyText.empty()) {
            issues_.add("--set " + text, "expected key.path=value, e.g. train.batch_size=64");
            return;
        }
        std::string error;
        const auto steps = parseKeyPath(keyText, &error);
        if (!steps) {
            issues_.add("--set " + text, "bad key path '" + keyText + "': " + error);
            return;
        }
        const std::string valueText = text.substr(eq + 1);
        // The value may be parsed as JSON: it gets a file's limits, before the parser sees it.
        if (const auto limit = checkExperimentLimits(valueText)) {
            issues_.add("--set " + shortened(text), "in the value: " + limit->message);
            return;
        }

        // Work on a copy: a path that fails half-way must not leave new or erased keys behind.
        json updated = document_;
        Cursor cursor{&root_, nullptr, false};
        json* target = &updated;
        std::string path;
        for (const KeyPathStep& step : *steps) {
            if (step.index) {
                if (!indexInto(*step.index, cursor, target, path, origin)) return;
            } else if (!descendInto(step.key, cursor, target, path, origin)) {
                return;
            }
        }

        json value = json::parse(valueText, nullptr, /*allow_exceptions=*/false);
        const SchemaKey* leaf = cursor.unchecked || cursor.layer ? nullptr : cursor.key;
        const bool wantsString = leaf && (leaf->type == SchemaType::String || leaf->type == SchemaType::Path ||
                                          leaf->type == SchemaType::Enum);
        if (value.is_discarded() || (wantsString && !value.is_string())) {
            // Raw text becomes a JSON string, which must be UTF-8 like every string of a file (the
            // parser checks those); messages and the run store print it.
            if (const std::string bad = utf8Problem(valueText); !bad.empty()) {
                issues_.add("--set " + shortened(text), "the value is not UTF-8 text: " + bad);
                return;
            }
            value = valueText;
        }
        if (leaf) resolveRelativePaths(value, *leaf, cwd_);
        *target = std::move(value);
        document_ = std::move(updated);
    }

private:
    bool descendInto(const std::string& key, Cursor& cursor, json*& target, std::string& path, const std::string& origin) {
        const std::string where = joinKeyPath(path, key);
        Cursor next;
        if (cursor.unchecked) {
            next.unchecked = true;
        } else if (cursor.layer) {
            if (key == "type") {
                next.unchecked = true;  // the value is checked by the validator with the other layer keys
            } else if (const SchemaKey* k = cursor.layer->find(key)) {
                next.key = k;
            } else {
                issues_.add(where, unknownKeyMessage(key, cursor.layer->keyNames(), "for a " + cursor.layer->name + " layer") + origin);
                return false;
            }
        } else if (cursor.key->type == SchemaType::Object) {
            next.key = cursor.key->find(key);
            if (!next.key) {
                issues_.add(where, unknownKeyMessage(key, cursor.key->keyNames()) + origin);
                return false;
            }
        } else {
            issues_.add(where, "'" + path + "' holds " + cursor.key->expectedText() + " and has no keys" + origin);
            return false;
        }

        if (target->is_null()) *target = json::object();
        if (!target->is_object()) {
            issues_.add(path, "is " + describeValue(*target) + ", not an object, so '" + key + "' cannot be set in it" + origin);
            return false;
        }
        if (!cursor.unchecked && !cursor.layer) {
            // Setting model.preset on a file with model.layers (or the reverse) replaces the model.
            const auto& group = cursor.key->oneOf;
            if (std::find(group.begin(), group.end(), key) != group.end())
                for (const std::string& other : group)
                    if (other != key) target->erase(other);
        }
        target = &(*target)[key];
        path = where;
        cursor = next;
        return true;
    }

    bool indexInto(std::size_t index, Cursor& cursor, json*& target, std::string& path, const std::string& origin) {
        const std::string where = engine::keyPathElement(path, index);
        if (!cursor.unchecked && (cursor.layer || cursor.key->type != SchemaType::Layers)) {
            issues_.add(where, "'" + path + "' is not a list, so it cannot be indexed" + origin);
            return false;
        }
        if (!target->is_array()) {
            issues_.add(where, "there is no list at '" + path + "' to index (the model may use a preset); set the "
                               "whole list instead, e.g. " + path + "='[{\"type\": \"flatten\"}, ...]'" + origin);
            return false;
        }
        if (index > target->size()) {
            issues_.add(where, "index out of range; '" + path + "' has " + std::to_string(target->size()) +
                               " entries (index " + std::to_string(target->size()) + " appends one)" + origin);
            return false;
        }
        if (index == target->size()) target->push_back(nullptr);
        target = &(*target)[index];
        path = where;

        Cursor next;
        next.unchecked = true;
        if (!cursor.unchecked && target->is_object() && target->contains("type") && (*target)["type"].is_string()) {
            const std::string type = (*target)["type"].get<std::string>();
            for (const LayerType& t : cursor.key->layerTypes)
                if (t.name == type) {
                    next.layer = &t;
                    next.unchecked = false;
                }
        }
        cursor = next;
        return true;
    }

    json& document_;
    const SchemaKey& root_;
    const std::filesystem::path& cwd_;
    IssueList& issues_;
};

}  // namespace

std::optional<std::vector<KeyPathStep>> parseKeyPath(const std::string& text, std::string* error) {
    std::vector<KeyPathStep> steps;
    std::size_t i = 0;
    const auto fail = [&](const std::string& why) -> std::optional<std::vector<KeyPathStep>> {
        if (error) *error = why + " at character " + std::to_string(i + 1);
        return std::nullopt;
    };
    while (true) {
        std::size_t start = i;
        while (i < text.size() && isKeyChar(text[i])) ++i;
        if (i == start) return fail("expected a key name");
        steps.push_back({text.substr(start, i - start), std::nullopt});
        while (i < text.size() && text[i] == '[') {
            start = ++i;
            while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
            if (i == start || i >= text.size() || text[i] != ']' || i - start > 9) return fail("expected an index like [2]");
            steps.push_back({"", std::stoul(text.substr(start, i - start))});
            ++i;
        }
        if (i == text.size()) return steps;
        if (text[i] != '.') return fail("unexpected '" + std::string(1, text[i]) + "'");
        ++i;
    }
}

void applyOverrides(json& document, const std::vector<std::string>& overrides, const SchemaKey& root,
                    const std::filesystem::path& cwd, IssueList& issues) {
    if (!document.is_object()) return;  // the validator reports that
    OverrideApplier applier(document, root, cwd, issues);
    for (const std::string& text : overrides) applier.apply(text);
}

}  // namespace trainbench::app
