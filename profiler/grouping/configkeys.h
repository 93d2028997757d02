#pragma once
// Which stored runs belong together, from their resolved experiment (runs.config_json): the keys the
// Runs and Compare pages, `trainbench-cli tta` and `plan` group by. Each is a canonical JSON text;
// two runs with equal keys are "the same" in that sense. docs/time-to-accuracy.md states the rules.
#include <cstdint>
#include <optional>
#include <string>

#include "profiler/store/runrow.h"

namespace trainbench::profiler {

// The same experiment but for the seed: the config without "name", "description" and "seed".
// Empty when the config is not a JSON object.
std::string seedGroupKey(const RunRow& run);
std::string seedGroupKey(const std::string& configJson);

// A scaling curve: the seed group key without strategy.replicas, so runs that differ only in
// replicas (and name, seed) fall on one curve. "#<id>" when the config is not a JSON object.
std::string scalingFamilyKey(const RunRow& run);

// The same numerics: model, data, optimizer and global batch (and asynchrony) equal; only where the
// run is placed (device section, synchronous strategy and its replicas, batch per replica, threads,
// pipeline speed knobs) and how long it runs or evaluates may differ. Runs with equal keys follow
// the same convergence in steps. Empty when the config is not a JSON object.
std::string numericsKey(const std::string& configJson, std::optional<int64_t> globalBatch);

// What a warm-started run is compared with: its seed group key without the warm start (every
// "warm_start*" key of train, or at the top) and without run length, evaluation and checkpoint
// settings, so a from-scratch run of the same configuration on the same devices matches it.
std::string fromScratchKey(const std::string& configJson);

}  // namespace trainbench::profiler
