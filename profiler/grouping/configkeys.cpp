#include "profiler/grouping/configkeys.h"

#include <initializer_list>

#include <nlohmann/json.hpp>

#include "engine/strategy/strategykind.h"

namespace trainbench::profiler {

namespace {

using nlohmann::json;

// The config without what only names a run or seeds it; discarded when not an object.
json withoutIdentity(const std::string& configJson) {
    json c = json::parse(configJson, nullptr, false);
    if (c.is_discarded() || !c.is_object()) return json(json::value_t::discarded);
    c.erase("name");
    c.erase("description");
    c.erase("seed");
    c.erase("sweep");
    return c;
}

void eraseIn(json& c, const char* section, std::initializer_list<const char*> keys) {
    auto it = c.find(section);
    if (it == c.end() || !it->is_object()) return;
    for (const char* k : keys) it->erase(k);
}

// How long a run trains, how often it evaluates and saves: none of it moves the curve in steps.
void eraseRunLength(json& c) {
    eraseIn(c, "train", {"epochs", "max_steps", "eval_every_steps", "eval_at_epoch_end", "target_accuracy",
                         "stop_at_target", "checkpoint_every_steps", "checkpoint_path", "checkpoint_at_end", "threads"});
}

void eraseWarmStart(json& c) {
    for (json* section : {&c, c.contains("train") && c["train"].is_object() ? &c["train"] : nullptr}) {
        if (!section) continue;
        for (auto it = section->begin(); it != section->end();) {
            if (it.key().rfind("warm_start", 0) == 0) it = section->erase(it);
            else ++it;
        }
    }
}

}  // namespace

std::string seedGroupKey(const std::string& configJson) {
    const json c = withoutIdentity(configJson);
    return c.is_discarded() ? std::string() : c.dump();
}

std::string seedGroupKey(const RunRow& run) { return seedGroupKey(run.config_json); }

std::string scalingFamilyKey(const RunRow& run) {
    json c = withoutIdentity(run.config_json);
    if (c.is_discarded()) return "#" + std::to_string(run.id.value);
    eraseIn(c, "strategy", {"replicas"});
    return c.dump();
}

std::string numericsKey(const std::string& configJson, std::optional<int64_t> globalBatch) {
    json c = withoutIdentity(configJson);
    if (c.is_discarded()) return {};
    eraseRunLength(c);
    c.erase("device");  // the virtual clock and the price: time, never numbers
    // Synchronous strategies average the gradient of one global batch whatever the placement;
    // asynchronous updates depend on how many workers and servers race, so those stay.
    const json strategy = c.value("strategy", json::object());
    const std::string type = strategy.value("type", std::string("single"));
    if (engine::parseStrategyKind(type) == engine::StrategyKind::ParameterServer)
        c["strategy"] = json{{"type", type}, {"replicas", strategy.value("replicas", 1)},
                             {"parameter_servers", strategy.value("parameter_servers", 1)}};
    else
        c["strategy"] = json{{"synchronous", true}};
    // The batch each step averages over, however it is written (global or per replica).
    eraseIn(c, "train", {"batch_size"});
    c["global_batch"] = globalBatch ? json(*globalBatch) : json();
    // Storage speed and the pipeline's parallelism change when a batch arrives, not what is in it.
    eraseIn(c, "data", {"storage"});
    if (c.contains("data") && c["data"].is_object())
        eraseIn(c["data"], "pipeline", {"parallel_reads", "map_parallel_calls", "prefetch", "autotune", "cache"});
    return c.dump();
}

std::string fromScratchKey(const std::string& configJson) {
    json c = withoutIdentity(configJson);
    if (c.is_discarded()) return {};
    eraseWarmStart(c);
    eraseRunLength(c);
    return c.dump();
}

}  // namespace trainbench::profiler
