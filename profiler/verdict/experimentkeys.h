#pragma once
// The experiment keys the actions change, with their documented defaults and ranges
// (docs/experiment-format.md). The profiler may not use app's schema (design.md: engine <- profiler
// <- app), so the few keys it writes are listed here; tests/app/verdictkeys_test.cpp holds this
// table to the schema.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/strategy/strategykind.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

struct ActionKey {
    enum class Type { Integer, Number, Boolean, Enum, Path };
    std::string key;              // dotted path
    Type type = Type::Integer;
    nlohmann::json default_value; // null: no default (required or none)
    std::optional<double> minimum, maximum;  // Integer, Number; inclusive
    std::vector<std::string> choices;        // Enum
};

const std::vector<ActionKey>& actionKeys();

// Reads a resolved experiment: values as stored, or the documented default when absent.
class ExperimentView {
public:
    explicit ExperimentView(const nlohmann::json& experiment) : experiment_(experiment) {}

    // The value at a dotted key; null when absent (what Change::from records).
    nlohmann::json at(const std::string& key) const;
    // The value, or the key's documented default when absent (or of the wrong type).
    int64_t integer(const std::string& key) const;
    double number(const std::string& key) const;
    bool flag(const std::string& key) const;
    std::string text(const std::string& key) const;
    // strategy.type (validated when the experiment was loaded; single when absent or unknown).
    engine::StrategyKind strategy() const;
    // Whether the run's device.type is an emulated device (any catalog id but "cpu"): its times
    // are a virtual clock's, not this host's.
    bool emulatedDevice() const;

    // The change of `key` to `to`, or nothing when `to` is outside the documented range, of the
    // wrong type, or already the value in effect (an action must change something runnable).
    std::optional<Change> change(const std::string& key, const nlohmann::json& to) const;

private:
    nlohmann::json effective(const std::string& key) const;
    const nlohmann::json& experiment_;
};

// Whether `value` is within `key`'s documented type and range.
bool withinRange(const ActionKey& key, const nlohmann::json& value);

}  // namespace trainbench::profiler
