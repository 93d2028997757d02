#pragma once
// The bottleneck classifier: what bounds a run (input, compute, memory bandwidth, memory capacity,
// communication, or nothing in particular), how badly, the numbers behind it, how that changed over
// the run, and ranked actions, each a concrete change to the run's experiment.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/verdict/profileinput.h"

namespace trainbench::profiler {

enum class BoundKind { Input, Compute, MemoryBandwidth, MemoryCapacity, Communication, Balanced };
enum class Severity { High, Moderate, Low };
// "input", "compute", "memory_bandwidth", "memory_capacity", "communication", "balanced" (the
// findings table's values); "high", "moderate", "low".
const char* boundKindName(BoundKind kind);
const char* severityName(Severity severity);
std::optional<BoundKind> boundKindFromName(const std::string& name);
// What a user reads: "input-bound (high)", "memory-bound, bandwidth (moderate)", "balanced (low)".
std::string verdictLabel(BoundKind kind, Severity severity);
std::optional<Severity> severityFromName(const std::string& name);

struct Evidence {
    std::string name;   // machine-readable, e.g. "input_fraction"
    double value = 0.0;
    std::string unit;   // "%", "ms", "GB/s", "GFLOP/s", "FLOP/B", "MB", ...
    std::string text;   // the sentence a user reads, e.g. "23.4 % of step time waiting for input"
};

struct Finding {
    BoundKind kind = BoundKind::Balanced;
    Severity severity = Severity::Low;
    std::string summary;              // one sentence
    std::vector<Evidence> evidence;
    int64_t first_step = 0;           // the steps it covers
    int64_t last_step = 0;
};

// One change to the experiment: key path (dots), its value in the run and the new value.
struct Change {
    std::string key;     // e.g. "data.pipeline.prefetch"
    nlohmann::json from; // null when the key was absent
    nlohmann::json to;
};

struct Action {
    BoundKind addresses = BoundKind::Balanced;
    std::string title;                       // e.g. "Prefetch batches on a background thread"
    std::vector<Change> changes;
    std::string expected;                    // the expected effect in words
    std::optional<double> expected_speedup;  // throughput factor, where it can be estimated
    std::string rationale;
};

struct Verdict {
    Finding verdict;                 // the run's verdict
    std::vector<Finding> findings;   // further findings about the whole run, most important first
    std::vector<Finding> windows;    // the timeline: one finding per window of steps, in order
    std::vector<Action> actions;     // ranked, best first
};

// Thresholds (TensorFlow Profiler's for input).
inline constexpr double kInputModerate = 0.05;     // >= 5 % of step time waiting for input
inline constexpr double kInputHigh = 0.20;         // >= 20 %
inline constexpr double kCommBound = 0.20;         // >= 20 % in gradient exchange or waiting for peers
inline constexpr double kCapacityFraction = 0.90;  // footprint >= 90 % of the device's memory

// Classifies a run. Pure: the same input gives the same verdict.
Verdict classify(const ProfileInput& input);

// Applies an action's changes to an experiment (JSON with nested objects); keys that do not exist
// are created. Throws std::invalid_argument naming the key if a path runs through a non-object.
nlohmann::json applyChanges(const nlohmann::json& experiment, const std::vector<Change>& changes);

}  // namespace trainbench::profiler
