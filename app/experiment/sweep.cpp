#include "app/experiment/sweep.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "app/experiment/experimentschema.h"
#include "app/experiment/issuelist.h"
#include "app/experiment/jsontext.h"
#include "app/experiment/overrides.h"
#include "app/experiment/pathresolution.h"
#include "app/experiment/schemavalidator.h"
#include "app/experiment/suggest.h"
#include "profiler/format/numberformat.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string trimmed(const std::string& s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The value of the last `--set sweep=...`, if any; it replaces the file's section.
const std::string* sweepOverride(const std::vector<std::string>& overrides) {
    const std::string* found = nullptr;
    for (const std::string& o : overrides) {
        const auto eq = o.find('=');
        if (eq != std::string::npos && trimmed(o.substr(0, eq)) == "sweep") found = &o;
    }
    return found;
}

std::string lastSegment(const std::string& keyPath) {
    const auto dot = keyPath.rfind('.');
    return dot == std::string::npos ? keyPath : keyPath.substr(dot + 1);
}

// What an axis is called in point names: its key, or its whole path when two axes share the key
// (optimizer.type and strategy.type).
std::vector<std::string> axisLabels(const std::vector<SweepAxis>& axes) {
    std::vector<std::string> labels;
    for (const SweepAxis& a : axes) {
        const std::string last = lastSegment(a.key);
        const bool shared = std::count_if(axes.begin(), axes.end(),
                                          [&](const SweepAxis& b) { return lastSegment(b.key) == last; }) > 1;
        std::string label = shared ? a.key : last;
        std::replace(label.begin(), label.end(), '.', '_');
        labels.push_back(label);
    }
    return labels;
}

// "replicas2", "learning_rate0.01", "type_sgd", "shuffle_false", "path_fashion-mnist": fit for file names.
std::string pointLabel(const std::string& label, const SchemaKey& key, const json& value) {
    if (value.is_number_float()) return label + profiler::shortestNumber(value.get<double>());
    if (value.is_number()) return label + value.dump();
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if (key.type == SchemaType::Path) {
        const std::string file = fs::path(text).lexically_normal().filename().string();
        if (!file.empty()) text = file;
    }
    for (char& c : text)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
    return label + "_" + text;
}

}  // namespace

std::size_t sweepPointCount(const std::vector<std::size_t>& lengths) {
    std::size_t total = 1;
    for (const std::size_t n : lengths) total = std::min(total * std::min(n, kMaxSweepPoints + 1), kMaxSweepPoints + 1);
    return total;
}

std::string sweepTooLargeMessage() {
    return "has more than " + std::to_string(kMaxSweepPoints) + " points (the product of the lists' lengths); split it";
}

std::vector<SweepAxis> sweepAxes(const std::string& text, const std::vector<std::string>& overrides) {
    // nlohmann::json keeps an object's keys sorted; ordered_json keeps them as written.
    using ordered = nlohmann::ordered_json;
    // Text over the limits is not parsed here either (parseExperiment reports it).
    const std::string* o = sweepOverride(overrides);
    const std::string sectionText = o ? o->substr(o->find('=') + 1) : std::string();
    if (checkExperimentLimits(o ? sectionText : text)) return {};
    ordered parsed = ordered::parse(o ? sectionText : text, nullptr, false);
    ordered section;
    if (o)
        section = std::move(parsed);
    else if (parsed.is_object() && parsed.contains("sweep"))
        section = std::move(parsed["sweep"]);
    std::vector<SweepAxis> axes;
    if (!section.is_object()) return axes;
    // Values only as many as a sweep may have points: each axis has at least one value per point.
    for (const auto& [key, values] : section.items()) {
        SweepAxis axis{key, {}};
        if (values.is_array() && values.size() <= kMaxSweepPoints)
            for (const ordered& v : values) axis.values.push_back(json::parse(v.dump()));
        axes.push_back(std::move(axis));
    }
    return axes;
}

const SchemaKey* sweepKey(const SchemaKey& root, const std::string& keyPath, std::string* error) {
    const auto fail = [&](const std::string& why) -> const SchemaKey* {
        if (error) *error = why;
        return nullptr;
    };
    std::string parseError;
    const auto steps = parseKeyPath(keyPath, &parseError);
    if (!steps) return fail("bad key path '" + keyPath + "': " + parseError);
    const SchemaKey* at = &root;
    std::string path;
    for (const KeyPathStep& step : *steps) {
        if (step.index) return fail("a single layer's keys cannot be swept; sweep model.preset, or write one file per model");
        if (at->type != SchemaType::Object) return fail("'" + path + "' holds " + at->expectedText() + " and has no keys");
        const SchemaKey* next = at->find(step.key);
        if (!next) {
            // A typo in a section suggests the whole key path ("did you mean 'strategy.replicas'?");
            // otherwise the message a file gets ("'learning_rate' belongs in optimizer", known keys).
            const auto match = path.empty() ? std::nullopt : closestMatch(step.key, at->keyNames());
            return fail(match ? unknownKeyMessage(joinKeyPath(path, step.key), {joinKeyPath(path, *match)})
                              : unknownKeyMessage(step.key, at->keyNames()));
        }
        at = next;
        path = joinKeyPath(path, step.key);
    }
    switch (at->type) {
        case SchemaType::Object:
            return fail("'" + path + "' is a section; sweep one of its keys, e.g. '" + path + "." + at->keys.front().key + "'");
        case SchemaType::Layers: return fail("the layer list cannot be swept; sweep model.preset, or write one file per model");
        case SchemaType::Sweep: return fail("a sweep cannot sweep itself");
        default: break;
    }
    if (path == "name") return fail("cannot be swept: each point's name is made from it");
    return at;
}

std::vector<std::string> sweepableKeys(const SchemaKey& root) {
    std::vector<std::string> out;
    const auto visit = [&](const auto& self, const SchemaKey& section, const std::string& path) -> void {
        for (const SchemaKey& k : section.keys) {
            const std::string keyPath = joinKeyPath(path, k.key);
            if (k.type == SchemaType::Object)
                self(self, k, keyPath);
            else if (sweepKey(root, keyPath, nullptr))
                out.push_back(keyPath);
        }
    };
    visit(visit, root, "");
    return out;
}

std::vector<SweepPoint> expandSweep(const std::string& text, const std::string& sourceName,
                                    const std::vector<std::string>& overrides) {
    const std::string source = sourceName.empty() ? std::string("experiment") : sourceName;
    // The file's own issues, the sweep's key paths and every value's type and range come first.
    const Experiment base = parseExperiment(text, source, overrides);
    std::vector<SweepAxis> axes = sweepAxes(text, overrides);
    if (axes.empty()) return {SweepPoint{base.name, {}, {}, base}};

    // parseExperiment refused a sweep of more points (SchemaValidator::checkSweep), before any copy.
    std::vector<std::size_t> lengths;
    for (const SweepAxis& a : axes) lengths.push_back(a.values.size());
    const std::size_t total = sweepPointCount(lengths);
    if (total > kMaxSweepPoints) throw ExperimentError(source, {{"sweep", sweepTooLargeMessage()}});

    // Relative paths among the values mean what they mean in the file: next to it (or, from --set, cwd).
    const fs::path folder = fs::path(source).parent_path();
    const fs::path base_dir = sweepOverride(overrides) || folder.empty() ? fs::current_path() : fs::absolute(folder);
    std::vector<const SchemaKey*> keys;
    for (SweepAxis& a : axes) {
        keys.push_back(sweepKey(experimentSchema(), a.key, nullptr));
        if (keys.back()->type == SchemaType::Path)
            for (json& v : a.values) v = resolvePath(v.get<std::string>(), base_dir);
    }
    const std::vector<std::string> labels = axisLabels(axes);

    IssueList issues;
    std::vector<SweepPoint> points;
    std::map<std::string, std::size_t> byName;
    for (std::size_t n = 0; n < total; ++n) {
        SweepPoint point;
        std::vector<std::size_t> index(axes.size());
        for (std::size_t a = axes.size(), rest = n; a-- > 0; rest /= axes[a].values.size())
            index[a] = rest % axes[a].values.size();
        std::string suffix, settingsText;
        for (std::size_t a = 0; a < axes.size(); ++a) {
            const json& value = axes[a].values[index[a]];
            point.settings.push_back({axes[a].key, value});
            point.overrides.push_back(axes[a].key + "=" + value.dump());
            suffix += "-" + pointLabel(labels[a], *keys[a], value);
            settingsText += (settingsText.empty() ? "" : ", ") + axes[a].key + "=" + value.dump();
        }
        point.name = base.name + suffix;
        point.overrides.push_back("name=" + point.name);
        if (const auto [it, fresh] = byName.emplace(point.name, n + 1); !fresh)
            issues.add("sweep", "points " + std::to_string(it->second) + " and " + std::to_string(n + 1) +
                                    " would both be named '" + point.name + "'; give values that differ in their names");
        std::vector<std::string> all = overrides;
        all.insert(all.end(), point.overrides.begin(), point.overrides.end());
        try {
            point.experiment = parseExperiment(text, source, all);
        } catch (const ExperimentError& e) {
            for (const ExperimentIssue& issue : e.issues())
                issues.add(issue.where, issue.message + " (in sweep point '" + point.name + "': " + settingsText + ")");
        }
        points.push_back(std::move(point));
    }
    if (!issues.empty()) throw ExperimentError(source, issues.items());
    return points;
}

std::vector<SweepPoint> loadSweepFile(const std::string& path, const std::vector<std::string>& overrides) {
    std::vector<SweepPoint> points = expandSweep(readExperimentFile(path), path, overrides);
    const std::string absolute = fs::absolute(path).lexically_normal().string();
    for (SweepPoint& p : points) p.experiment.source_path = absolute;
    return points;
}

}  // namespace trainbench::app
