#include "app/plan/layoutmodelfile.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "app/experiment/issuelist.h"
#include "app/experiment/jsontext.h"
#include "app/experiment/suggest.h"
#include "engine/emulation/graphtransformer.h"
#include "engine/emulation/importedgraph.h"

namespace trainbench::app {

namespace {

const std::vector<std::string> kLayoutModelKeys{"about", "name", "layers", "hidden", "heads", "sequence",
                                                "vocab", "ffn", "global_batch"};

std::string layoutIssuesText(const std::string& source, const IssueList& issues) {
    std::string text;
    for (const ExperimentIssue& i : issues.items()) {
        if (!text.empty()) text += "\n";
        text += source + ": " + (i.where.empty() ? "" : i.where + ": ") + i.message;
    }
    return text;
}

}  // namespace

LayoutModel parseLayoutModelText(const std::string& text, const std::string& source) {
    IssueList issues;
    const nlohmann::json doc = parseJsonText(text, source, issues);
    if (!issues.empty()) {
        std::string all;
        for (const ExperimentIssue& i : issues.items()) all += (all.empty() ? "" : "\n") + i.where + ": " + i.message;
        throw std::invalid_argument(all);
    }
    if (!doc.is_object()) throw std::invalid_argument(source + ": expected a JSON object describing a transformer");
    for (const auto& [key, value] : doc.items()) {
        if (std::find(kLayoutModelKeys.begin(), kLayoutModelKeys.end(), key) != kLayoutModelKeys.end()) continue;
        const auto near = closestMatch(key, kLayoutModelKeys);
        issues.add(key, near ? "unknown key; did you mean '" + *near + "'?" : "unknown key; expected one of " + quotedList(kLayoutModelKeys));
    }
    LayoutModel m;
    m.source = source;
    engine::TransformerShape& s = m.costs.shape;
    auto integer = [&](const char* key, bool required, int64_t& out) {
        if (!doc.contains(key)) {
            if (required) issues.add(key, "missing; expected a positive integer");
            return false;
        }
        const nlohmann::json& v = doc.at(key);
        if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
            issues.add(key, "expected a positive integer, got " + v.dump());
            return false;
        }
        out = v.get<int64_t>();
        return true;
    };
    if (doc.contains("name")) {
        if (doc.at("name").is_string())
            s.name = doc.at("name").get<std::string>();
        else
            issues.add("name", "expected a string, got " + doc.at("name").dump());
    }
    if (doc.contains("about") && !doc.at("about").is_string()) issues.add("about", "expected a string, got " + doc.at("about").dump());
    integer("layers", true, s.layers);
    integer("hidden", true, s.hidden);
    integer("heads", true, s.heads);
    integer("sequence", true, s.sequence);
    integer("vocab", true, s.vocab);
    integer("ffn", false, s.ffn);
    int64_t batch = 0;
    if (integer("global_batch", false, batch)) m.global_batch = batch;
    if (issues.empty() && s.hidden % s.heads != 0)
        issues.add("heads", std::to_string(s.heads) + " heads do not divide the hidden size " + std::to_string(s.hidden));
    if (!issues.empty()) throw std::invalid_argument(layoutIssuesText(source, issues));
    if (s.name.empty()) s.name = source;
    m.costs = engine::decoderCosts(s);
    return m;
}

LayoutModel readLayoutModel(const std::string& path) {
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0) {
        LayoutModel m;
        m.source = path;
        try {
            m.costs = engine::transformerCostsOfGraph(*engine::importedGraph(path));
        } catch (const std::exception& e) {
            throw std::invalid_argument(path + ": " + e.what());
        }
        return m;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument(path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    const std::string body = text.str();
    if (body.size() > kExperimentLimits.maxBytes)
        throw std::invalid_argument(path + ": is " + std::to_string(body.size()) + " bytes, over the limit of " +
                                    std::to_string(kExperimentLimits.maxBytes) + " bytes");
    return parseLayoutModelText(body, path);
}

}  // namespace trainbench::app
