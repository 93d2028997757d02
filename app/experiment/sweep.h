#pragma once
// Sweeps: one experiment file standing for several runs. A file's top-level "sweep" section names key
// paths of other keys, each with a list of values, {"strategy.replicas": [1, 2, 4]}; the runs are every
// combination of the values (docs/experiment-format.md, "Sweeps"). Each point is the file with
// `--set key=value` overrides, so a point can be named and re-created on a command line, and a
// multi_worker job's tasks (started as `trainbench-cli worker FILE --set ...`) load the same point.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.h"
#include "app/experiment/schemakey.h"

namespace trainbench::app {

// One key of a sweep and the values it takes, as written.
struct SweepAxis {
    std::string key;  // "strategy.replicas"
    std::vector<nlohmann::json> values;
};

struct SweepSetting {
    std::string key;
    nlohmann::json value;
};

// One run of a sweep.
struct SweepPoint {
    std::string name;                    // the experiment's name plus the point: "fmnist-mlp-replicas2"
    std::vector<SweepSetting> settings;  // this point's value of each axis, in axis order
    // The point as overrides ("strategy.replicas=2", ..., "name=fmnist-mlp-replicas2"), to be given
    // after the caller's own; empty for a file without a sweep.
    std::vector<std::string> overrides;
    Experiment experiment;               // validated: parseExperiment(text, source, caller's + overrides)
};

// An experiment file's runs, in order: every combination of the sweep's values, axes in file order,
// the last axis varying fastest. The file without its sweep must be valid on its own, and so must
// every point (the parser of `trainbench-cli run`, parseExperiment, checks each one): all issues of
// all points are thrown together, each naming its point. A file without a sweep is one point, the
// experiment itself. `overrides` (--set) apply to every point; a point's own values win over them.
std::vector<SweepPoint> expandSweep(const std::string& text, const std::string& sourceName,
                                    const std::vector<std::string>& overrides = {});
std::vector<SweepPoint> loadSweepFile(const std::string& path, const std::vector<std::string>& overrides = {});

// The sweep's axes in file order (a later `--set sweep={...}` replaces the file's); no validation.
std::vector<SweepAxis> sweepAxes(const std::string& text, const std::vector<std::string>& overrides = {});

// The schema key a sweep key path names ("strategy.replicas"), or nullptr with *error saying why:
// an unknown key (with unknownKeyMessage's suggestion), a section, the layer list, or "name".
const SchemaKey* sweepKey(const SchemaKey& root, const std::string& keyPath, std::string* error);

// Every key path a sweep may name, in schema order ("seed", "data.dataset", ...).
std::vector<std::string> sweepableKeys(const SchemaKey& root);

// A sweep stops here rather than running for days by accident. Checked while the file is validated,
// before any point is made.
inline constexpr std::size_t kMaxSweepPoints = 1000;

// The number of points of axes of these lengths, or kMaxSweepPoints + 1 if it is more than kMaxSweepPoints.
std::size_t sweepPointCount(const std::vector<std::size_t>& lengths);
// The issue of a sweep of more than kMaxSweepPoints points.
std::string sweepTooLargeMessage();

}  // namespace trainbench::app
