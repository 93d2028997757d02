// `trainbench-cli apply` on a prediction run: the action becomes a new prediction with the same
// model, split and output (suffixed), its data.* changes as --set and a batch change as --batch-size.
#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "app/cli/applyprediction.h"
#include "app/experiment/actionexperiment.h"
#include "app/predict/predictrun.h"
#include "app/quote/quote.h"
#include "app/run/exitcodes.h"
#include "profiler/store/runattributes.h"

namespace trainbench::cli {

namespace {

// "key.path=value" as --set reads it: strings as they are, anything else as JSON.
std::string setting(const std::string& key, const nlohmann::json& value) {
    return key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
}

// The leaves of `now` under `prefix` that differ from `before`'s.
void differences(const nlohmann::json& before, const nlohmann::json& now, const std::string& prefix,
                 std::map<std::string, nlohmann::json>& out) {
    if (now.is_object()) {
        for (auto it = now.begin(); it != now.end(); ++it)
            differences(before.is_object() && before.contains(it.key()) ? before[it.key()] : nlohmann::json(), it.value(),
                        prefix + "." + it.key(), out);
        return;
    }
    if (now != before) out[prefix] = now;
}

}  // namespace

std::optional<PredictArgs> predictionForAction(profiler::RunStore& store, const profiler::RunRow& run,
                                               const profiler::Action& action, int number, std::string& refusal) {
    std::map<std::string, std::string> attrs;
    for (const auto& [k, v] : store.attributes(run.id)) attrs[k] = v;
    namespace runattr = profiler::runattr;
    if (!attrs.count(runattr::kPredictSourceRun)) return std::nullopt;
    PredictArgs p;
    p.model = attrs[runattr::kPredictSourceRun];
    p.db = store.path();
    p.split = attrs[runattr::kPredictSplit];
    p.batch_size = std::stoll(attrs[runattr::kPredictBatchSize]);
    if (attrs.count(runattr::kPredictReplicas)) p.replicas = std::stoi(attrs[runattr::kPredictReplicas]);
    const std::filesystem::path out(attrs[runattr::kPredictOutput]);
    p.out = (out.parent_path() / (out.stem().string() + "-action" + std::to_string(number) + out.extension().string())).string();
    // The prediction's own data settings (what it changed from the source run's, or for an ONNX
    // model, which has no data, from the defaults), then the action's.
    std::map<std::string, nlohmann::json> data;
    nlohmann::json before = nlohmann::json::object();
    // predict.source_run is the source run's id, or the ONNX file's path.
    const bool fromRun = !p.model.empty() && p.model.find_first_not_of("0123456789") == std::string::npos;
    if (!fromRun) {
        before = app::onnxPredictionExperiment(p.model, {}).resolved.value("data", before);
    } else if (const auto source = store.run(profiler::RunId{std::stoll(p.model)})) {
        before = nlohmann::json::parse(source->config_json).value("data", before);
    }
    const nlohmann::json recorded = nlohmann::json::parse(run.config_json);
    differences(before, recorded.value("data", nlohmann::json::object()), "data", data);
    // A prediction with an ONNX model must say which data, even the default's.
    if (!fromRun && recorded.contains("data") && recorded["data"].contains("dataset"))
        data["data.dataset"] = recorded["data"]["dataset"];
    for (const profiler::Change& c : action.changes) {
        if (c.key == "train.batch_size" && c.to.is_number_integer()) p.batch_size = c.to.get<int64_t>();
        else if (c.key.rfind("data.", 0) == 0) data[c.key] = c.to;
        else {
            refusal = "action " + std::to_string(number) + " changes " + c.key + ", which is not a prediction's setting";
            return std::nullopt;
        }
    }
    for (const auto& [key, value] : data) p.overrides.push_back(setting(key, value));
    return p;
}

std::string predictCommandLine(const PredictArgs& p) {
    std::string s = "trainbench-cli predict " + app::shellWord(p.model, "MODEL") + " -o " + app::shellWord(p.out, "-o") +
                    " --split " + p.split + " --batch-size " + std::to_string(p.batch_size);
    if (p.replicas > 1) s += " --replicas " + std::to_string(p.replicas);
    for (const std::string& o : p.overrides) s += " --set " + app::shellWord(o, "--set");
    return s + " --db " + app::shellWord(p.db, "--db");
}

}  // namespace trainbench::cli
