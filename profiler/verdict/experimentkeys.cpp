// The keys actions change, their defaults and ranges (see experimentkeys.h).
#include "profiler/verdict/experimentkeys.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainbench::profiler {

namespace {

using json = nlohmann::json;
using Type = ActionKey::Type;

ActionKey integer(std::string key, int64_t def, double min, std::optional<double> max = std::nullopt) {
    return {std::move(key), Type::Integer, def, min, max, {}};
}
ActionKey number(std::string key, double def, double min, double max) {
    return {std::move(key), Type::Number, def, min, max, {}};
}
ActionKey boolean(std::string key, bool def) { return {std::move(key), Type::Boolean, def, {}, {}, {}}; }
ActionKey choice(std::string key, json def, std::vector<std::string> choices) {
    return {std::move(key), Type::Enum, std::move(def), {}, {}, std::move(choices)};
}
ActionKey path(std::string key) { return {std::move(key), Type::Path, nullptr, {}, {}, {}}; }

const ActionKey& find(const std::string& key) {
    for (const ActionKey& k : actionKeys())
        if (k.key == key) return k;
    // A catalogue entry for a key not in the table is a bug in the catalogue, not in the run.
    throw std::logic_error("verdict actions: no range known for experiment key '" + key + "'");
}

}  // namespace

const std::vector<ActionKey>& actionKeys() {
    static const std::vector<ActionKey> keys = {
        choice("data.dataset", "fashion-mnist", {"fashion-mnist", "idx", "tfrecord", "csv", "images", "example_files", "shape"}),
        path("data.train_files"),
        path("data.test_files"),
        integer("data.pipeline.cycle_length", 1, 1, 256),
        boolean("data.pipeline.parallel_reads", false),
        integer("data.pipeline.map_parallel_calls", 1, 1, 256),
        integer("data.pipeline.prefetch", 2, 0, 1024),
        boolean("data.pipeline.cache", false),
        boolean("data.pipeline.autotune", false),
        choice("model.preset", nullptr, {"logreg", "mlp", "cnn", "resnet_small", "resnet50"}),
        integer("train.batch_size", 128, 1, 65536),
        integer("train.epochs", 1, 0),
        integer("train.max_steps", 0, 0),
        integer("train.eval_every_steps", 0, 0),
        number("train.target_accuracy", 0.0, 0.0, 1.0),
        boolean("train.stop_at_target", false),
        integer("train.threads", 0, 0, 1024),
        integer("train.checkpoint_every_steps", 0, 0),
        choice("strategy.type", "single", engine::strategyKindNames()),
        integer("strategy.replicas", 1, 1, 64),
        integer("strategy.threads_per_replica", 0, 0, 1024),
        number("strategy.bucket_mb", 1.0, 0.0, 1024.0),
        boolean("strategy.overlap", true),
        integer("strategy.parameter_servers", 1, 1, 64),
        integer("strategy.stages", 2, 1, 64),
        integer("strategy.micro_batches", 4, 1, 4096),
        integer("strategy.tensor", 2, 1, 64),
        boolean("strategy.recompute", false),
        number("device.network_gbps", 100.0, 0.001, 100000.0),
    };
    return keys;
}

bool withinRange(const ActionKey& key, const json& value) {
    switch (key.type) {
    case Type::Boolean:
        return value.is_boolean();
    case Type::Path:
        return value.is_string() && !value.get<std::string>().empty();
    case Type::Enum:
        return value.is_string() &&
               std::find(key.choices.begin(), key.choices.end(), value.get<std::string>()) != key.choices.end();
    case Type::Integer:
    case Type::Number: {
        if (!value.is_number()) return false;
        const double v = value.get<double>();
        if (key.type == Type::Integer && v != std::floor(v)) return false;
        if (key.minimum && v < *key.minimum) return false;
        if (key.maximum && v > *key.maximum) return false;
        return true;
    }
    }
    return false;
}

json ExperimentView::at(const std::string& key) const {
    const json* node = &experiment_;
    size_t begin = 0;
    while (true) {
        const size_t dot = key.find('.', begin);
        const std::string part = key.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
        if (!node->is_object()) return nullptr;
        const auto it = node->find(part);
        if (it == node->end()) return nullptr;
        node = &*it;
        if (dot == std::string::npos) return *node;
        begin = dot + 1;
    }
}

json ExperimentView::effective(const std::string& key) const {
    const ActionKey& k = find(key);
    json v = at(key);
    return withinRange(k, v) ? v : k.default_value;
}

int64_t ExperimentView::integer(const std::string& key) const {
    const json v = effective(key);
    return v.is_number() ? static_cast<int64_t>(v.get<double>()) : 0;
}

double ExperimentView::number(const std::string& key) const {
    const json v = effective(key);
    return v.is_number() ? v.get<double>() : 0.0;
}

bool ExperimentView::flag(const std::string& key) const {
    const json v = effective(key);
    return v.is_boolean() && v.get<bool>();
}

std::string ExperimentView::text(const std::string& key) const {
    const json v = effective(key);
    return v.is_string() ? v.get<std::string>() : std::string();
}

engine::StrategyKind ExperimentView::strategy() const {
    return engine::parseStrategyKind(text("strategy.type")).value_or(engine::StrategyKind::Single);
}

bool ExperimentView::emulatedDevice() const {
    const json device = at("device.type");  // absent: this host's CPU
    return device.is_string() && device.get_ref<const std::string&>() != "cpu";
}

std::optional<Change> ExperimentView::change(const std::string& key, const json& to) const {
    const ActionKey& k = find(key);
    if (!withinRange(k, to)) return std::nullopt;
    if (effective(key) == to) return std::nullopt;
    return Change{key, at(key), to};
}

}  // namespace trainbench::profiler
