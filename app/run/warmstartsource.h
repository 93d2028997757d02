#pragma once
// The checkpoint a warm-started run starts from (train.warm_start): found through a run of the store
// (its run attribute checkpoint.path) or given as a file, read whole, with what its metadata says.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/experiment/experiment.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/warmstart.h"
#include "engine/strategy/strategy.h"

namespace trainbench::app {

struct WarmStartSource {
    engine::Checkpoint checkpoint;
    bool by_run = false;          // named by train.warm_start.run (else .checkpoint)
    std::optional<int64_t> run;   // the source run in this store, when known
    std::optional<int64_t> step;  // steps the source had trained at the checkpoint (its metadata)
    // Updates the checkpoint's optimizer state has taken: step plus the source's own carried count.
    int64_t optimizer_steps = 0;
    bool carry_optimizer = false;

    // Loads the checkpoint into every replica of the strategy (Strategy::warmStart). A checkpoint of
    // another model is a CheckpointError naming the key path, the source run, the file and the
    // first difference: "train.warm_start.run: run 17's checkpoint: /x/run-17.ckpt: the checkpoint
    // holds another model: layer 2 (dense): checkpoint has 1290 parameters, this model has 2570".
    void startFrom(engine::Strategy& strategy) const;
    // What the run records: warm_start.checkpoint, warm_start.step (when known), warm_start.optimizer.
    std::vector<std::pair<std::string, std::string>> attributes() const;
    // "run 17's checkpoint /x/run-17.ckpt (step 40), fresh optimizer": for the log.
    std::string summary() const;
    // "train.warm_start.run: run 17's checkpoint" or "train.warm_start.checkpoint": for errors.
    std::string context() const;
};

// Resolves and reads the source. Errors name the key path (train.warm_start.run or .checkpoint):
// std::invalid_argument for a run that is not in the store or kept no checkpoint, CheckpointError
// (with the file) for a checkpoint that is missing, damaged, or now holds another run's parameters.
// With the optimizer carried, the checkpoint's metadata must say its step.
WarmStartSource openWarmStart(const WarmStartConfig& config, const std::string& dbPath);

}  // namespace trainbench::app
