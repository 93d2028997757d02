#pragma once
// How long to train and how often to evaluate.
#include <cstdint>
#include <string>

namespace trainbench::engine {

struct TrainConfig {
    int64_t batch_size = 128;
    int64_t epochs = 1;            // stop after this many epochs (0 = no epoch limit)
    int64_t max_steps = 0;         // stop after this many steps (0 = no step limit)
    int64_t eval_every_steps = 0;  // evaluate on the test set every N steps (0 = only at epoch end)
    bool eval_at_epoch_end = true;
    double target_accuracy = 0.0;  // record time-to-target when test accuracy first reaches it (0 = none)
    bool stop_at_target = false;   // end the run when the target is reached
    int threads = 0;               // intra-op threads (0 = all cores)
    uint64_t seed = 42;            // initialisation, shuffling and dropout
    int64_t checkpoint_every_steps = 0;  // save a checkpoint every N steps (0 = never)
    std::string checkpoint_path;         // where (empty: checkpoints/run-<id>.ckpt next to the run store)
    bool checkpoint_at_end = false;      // save one when the run ends too (what a warm start reads)
};

}  // namespace trainbench::engine
