#include "app/run/warmstartsource.h"

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/util/errors.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

namespace {

constexpr const char* kRunKey = "train.warm_start.run";
constexpr const char* kCheckpointKey = "train.warm_start.checkpoint";

// The checkpoint path a run recorded, or nullopt when it saved none. std::invalid_argument when the
// run is not there.
std::optional<std::string> checkpointOfRun(const std::string& dbPath, int64_t run) {
    const std::string id = std::to_string(run);
    try {
        profiler::RunStore store = profiler::RunStore::open(dbPath, profiler::OpenMode::ReadOnly);
        if (!store.run(profiler::RunId{run}))
            throw std::invalid_argument(std::string(kRunKey) + ": there is no run " + id + " in " + dbPath);
        for (const auto& [key, value] : store.attributes(profiler::RunId{run}))
            if (key == runattr::kCheckpointPath) return value;
        return std::nullopt;
    } catch (const profiler::StoreError& e) {
        throw std::invalid_argument(std::string(kRunKey) + ": cannot look run " + id + " up in " + dbPath + ": " + e.what());
    }
}

// The run of this store whose checkpoint the file is (its metadata's run_id, confirmed by the
// run's checkpoint.path), or nullopt: a file from elsewhere may carry a run id of another store.
std::optional<int64_t> runOfFile(const std::string& dbPath, const std::string& file, std::optional<int64_t> claimed) {
    if (!claimed || !std::filesystem::exists(dbPath)) return std::nullopt;
    try {
        const std::optional<std::string> recorded = checkpointOfRun(dbPath, *claimed);
        std::error_code ec;
        if (recorded && std::filesystem::equivalent(*recorded, file, ec)) return claimed;
    } catch (const std::invalid_argument&) {
        // not a run of this store
    }
    return std::nullopt;
}

// The checkpoint's metadata as JSON, or an empty object when it is not JSON (a file written by
// another tool holds parameters just the same).
nlohmann::json metadataOf(const engine::Checkpoint& c) {
    try {
        nlohmann::json j = nlohmann::json::parse(c.metadata());
        return j.is_object() ? j : nlohmann::json::object();
    } catch (const nlohmann::json::exception&) {
        return nlohmann::json::object();
    }
}

std::optional<int64_t> integerAt(const nlohmann::json& j, const char* key) {
    if (j.contains(key) && j[key].is_number_integer()) return j[key].get<int64_t>();
    return std::nullopt;
}

}  // namespace

void WarmStartSource::startFrom(engine::Strategy& strategy) const {
    try {
        strategy.warmStart(checkpoint, {carry_optimizer, optimizer_steps});
    } catch (const engine::CheckpointError& e) {
        throw engine::CheckpointError(context() + ": " + e.what());
    }
}

std::vector<std::pair<std::string, std::string>> WarmStartSource::attributes() const {
    std::vector<std::pair<std::string, std::string>> a = {
        {runattr::kWarmStartCheckpoint, std::filesystem::absolute(checkpoint.path()).string()},
        {runattr::kWarmStartOptimizer, carry_optimizer ? "carry" : "fresh"}};
    if (step) a.emplace_back(runattr::kWarmStartStep, std::to_string(*step));
    return a;
}

std::string WarmStartSource::summary() const {
    std::string s = (run ? "run " + std::to_string(*run) + "'s checkpoint " : "checkpoint ") + checkpoint.path();
    if (step) s += " (step " + std::to_string(*step) + ")";
    return s + (carry_optimizer ? ", optimizer state carried over (" + std::to_string(optimizer_steps) + " updates)"
                                : ", fresh optimizer");
}

std::string WarmStartSource::context() const {
    if (by_run) return std::string(kRunKey) + ": run " + std::to_string(run.value_or(0)) + "'s checkpoint";
    return std::string(kCheckpointKey) + (run ? " (run " + std::to_string(*run) + ")" : "");
}

WarmStartSource openWarmStart(const WarmStartConfig& config, const std::string& dbPath) {
    if (config.run > 0 && !config.checkpoint.empty())
        throw std::invalid_argument("train.warm_start: give only one of 'run', 'checkpoint', not both");
    std::string file = config.checkpoint;
    const char* key = kCheckpointKey;
    if (config.run > 0) {
        key = kRunKey;
        const std::optional<std::string> recorded = checkpointOfRun(dbPath, config.run);
        if (!recorded)
            throw std::invalid_argument(std::string(kRunKey) + ": run " + std::to_string(config.run) +
                                        " kept no checkpoint (it ran without train.checkpoint_every_steps and "
                                        "train.checkpoint_at_end)");
        file = *recorded;
    }
    const std::string from = config.run > 0 ? "run " + std::to_string(config.run) + "'s checkpoint: " : "";
    std::optional<engine::Checkpoint> ck;
    try {
        ck = engine::Checkpoint::read(file);
    } catch (const engine::CheckpointError& e) {
        throw engine::CheckpointError(std::string(key) + ": " + from + e.what());
    }
    const nlohmann::json meta = metadataOf(*ck);
    const std::optional<int64_t> metaRun = integerAt(meta, "run_id");
    WarmStartSource s{std::move(*ck), config.run > 0, std::nullopt, integerAt(meta, "step"), 0, config.carry_optimizer};
    if (config.run > 0) {
        // Runs that share a train.checkpoint_path replace each other's checkpoint.
        if (metaRun && *metaRun != config.run)
            throw engine::CheckpointError(std::string(kRunKey) + ": run " + std::to_string(config.run) + "'s checkpoint " +
                                          file + " now holds run " + std::to_string(*metaRun) +
                                          "'s parameters (a later run with the same train.checkpoint_path replaced it)");
        s.run = config.run;
    } else {
        s.run = runOfFile(dbPath, file, metaRun);
    }
    if (config.carry_optimizer) {
        if (!s.step)
            throw engine::CheckpointError(std::string(key) + ": " + from + file +
                                          ": cannot carry the optimizer over: the checkpoint's metadata does not say "
                                          "at which step it was saved");
        s.optimizer_steps = *s.step + integerAt(meta, "optimizer_steps_before").value_or(0);
    }
    return s;
}

}  // namespace trainbench::app
