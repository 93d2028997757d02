#pragma once
// An experiment file, parsed and validated: the engine's config structs plus the resolved JSON
// (every default filled in) that the run store keeps and `trainbench-cli show` prints.
// The format is documented in docs/experiment-format.md; the schema is in experimentschema.h.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experimenterror.h"
#include "engine/data/dataconfig.h"
#include "engine/model/modelspec.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/strategy/strategyconfig.h"
#include "engine/train/trainconfig.h"

namespace trainbench::app {

// The device a run stands for: this host's CPU, or an emulated device of the catalog.
struct DeviceConfig {
    std::string type = "cpu";          // "cpu", or a device catalog id (emulated, virtual clock)
    std::string precision = "auto";    // auto | fp32 | tf32 | bf16 (what the virtual clock charges)
    std::string catalog;               // a user's device catalog; empty: the built-in one
    double infeed_seconds_per_batch = 0.0;  // emulated: the host's time per global batch (0: measure)
    double price_per_hour = -1.0;      // USD per device-hour; -1: the catalog's
    double memory_mb = 0.0;            // 0: the host's RAM (or the emulated device's memory)
    // Emulated multi_worker, parameter_server: the network between the hosts (per direction), and
    // the memory bandwidth a parameter server applies updates at.
    double network_gbps = 100.0;       // Gbit/s
    double network_latency_us = 10.0;
    double ps_memory_gbs = 20.0;       // GB/s
    bool emulated() const { return type != "cpu"; }
};

// train.warm_start: the checkpoint a run starts from instead of random initial parameters.
struct WarmStartConfig {
    int64_t run = 0;               // a run of the same store, whose checkpoint.path it reads (0: none)
    std::string checkpoint;        // or a checkpoint file (empty: none); at most one of the two
    bool carry_optimizer = false;  // "optimizer": "carry" (default "fresh")
    bool given() const { return run > 0 || !checkpoint.empty(); }
};

struct Experiment {
    std::string name;         // "name", else the file name without ".json"
    std::string description;
    std::string source_path;  // absolute path of the file (loadExperimentFile), else the source name
    engine::DataConfig data;
    engine::ModelSpec model;  // presets expanded into layers; model.preset keeps the name
    engine::OptimizerConfig optimizer;
    engine::TrainConfig train;
    engine::StrategyConfig strategy;
    DeviceConfig device;
    WarmStartConfig warm_start;
    // The whole configuration with every default filled in, presets kept by name, data paths made
    // absolute, overrides applied. Parsing it again gives the same experiment.
    nlohmann::json resolved;
};

// Reads, validates and converts an experiment file. Relative paths in the file (data.path)
// resolve against the file's folder; relative paths given in overrides against the current
// directory. Throws ExperimentError listing every issue (or the OS error if the file is unreadable).
Experiment loadExperimentFile(const std::string& path, const std::vector<std::string>& overrides = {});

// The file's text (loadExperimentFile's first step); throws ExperimentError with the OS error.
std::string readExperimentFile(const std::string& path);

// The same from text. sourceName is used in messages, for the default name (its stem) and as the
// base for relative paths (its folder; the current directory if it has none).
Experiment parseExperiment(const std::string& text, const std::string& sourceName,
                           const std::vector<std::string>& overrides = {});

}  // namespace trainbench::app
