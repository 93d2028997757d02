// applyChanges(): an action's changes written into a copy of the experiment.
#include <stdexcept>

#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

namespace {

using json = nlohmann::json;

// The parts of a dotted key; an empty part or a layer index ("layers[2]") is refused: actions only
// name object keys, and a silent literal key "layers[2]" would be a new, unknown key.
std::vector<std::string> splitKey(const std::string& key) {
    std::vector<std::string> parts;
    size_t begin = 0;
    while (true) {
        const size_t dot = key.find('.', begin);
        std::string part = key.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
        if (part.empty()) throw std::invalid_argument(key + ": empty key in the path");
        if (part.find_first_of("[]") != std::string::npos)
            throw std::invalid_argument(key + ": array indices are not supported in a change's key");
        parts.push_back(std::move(part));
        if (dot == std::string::npos) return parts;
        begin = dot + 1;
    }
}

}  // namespace

json applyChanges(const json& experiment, const std::vector<Change>& changes) {
    json out = experiment;
    for (const Change& change : changes) {
        const std::vector<std::string> parts = splitKey(change.key);
        json* node = &out;
        std::string path;
        for (size_t i = 0; i < parts.size(); ++i) {
            // null carries nothing (the format forbids it as a value): it becomes the object needed.
            if (node->is_null()) *node = json::object();
            if (!node->is_object())
                throw std::invalid_argument(change.key + ": " + (path.empty() ? std::string("the experiment") : path) +
                                            " is a " + node->type_name() + ", not an object");
            path += (path.empty() ? "" : ".") + parts[i];
            node = &(*node)[parts[i]];
        }
        *node = change.to;
        // As with --set: a model has one of preset and layers, so setting one drops the other.
        if (change.key == "model.preset") out["model"].erase("layers");
        if (change.key == "model.layers") out["model"].erase("preset");
    }
    return out;
}

}  // namespace trainbench::profiler
