#pragma once
// What the trainer pulls its batches from. Two kinds: the in-memory pipeline for IDX data sets
// (shuffled and batched in place, no copies but the batch itself) and the streaming pipeline for
// record files, CSV and image folders (streamingpipeline.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/dataconfig.h"
#include "engine/data/storage/storage.h"

namespace trainbench::engine {

// One stage's work since the pipeline started (cumulative; the trainer stores per-step deltas).
struct StageStats {
    std::string name;        // "read", "map", "shuffle", "batch", "prefetch"
    double seconds = 0.0;    // busy time of the stage's threads, summed
    int64_t items = 0;       // records read / examples decoded / batches made
    int64_t bytes = 0;       // bytes read (read stage), bytes of decoded features (map, batch)
    double fill_sum = 0.0;   // sum over fill_samples of the stage's queue fill (0..1) ...
    int64_t fill_samples = 0;  // ... so mean fill = fill_sum / fill_samples
    int64_t capacity = 0;    // queue capacity in items (0 = the stage has no queue)
};

struct PipelineStats {
    std::vector<StageStats> stages;
    StorageStats storage;
    int64_t skipped_records = 0;  // corrupt records skipped (skip_corrupt)
};

struct BatchView {
    float* x = nullptr;          // count * exampleSize() floats; the consumer may overwrite them
    const int32_t* y = nullptr;  // count labels
    int64_t count = 0;           // 0: the epoch is over
};

// The settings the pipeline runs with (after autotuning, if it ran), recorded with the run.
struct PipelineChoice {
    int64_t cycle_length = 1;
    bool parallel_reads = false;
    int64_t map_parallel_calls = 1;
    int64_t prefetch = 0;
    bool autotuned = false;
    double autotune_seconds = 0.0;
    std::string notes;  // what autotune measured, one line per candidate
};

class InputPipeline {
public:
    virtual ~InputPipeline() = default;
    // Epochs are started in order 0, 1, 2, ...
    virtual void startEpoch(int64_t epoch) = 0;
    // The next batch of the current epoch; valid until the next call. Throws DataError for bad data.
    virtual BatchView next() = 0;
    // Called by the trainer in the middle of a step (after the forward pass).
    virtual void stepMidpoint() {}
    // 0 when not known before the first full epoch (streaming sources).
    virtual int64_t batchesPerEpoch() const = 0;
    virtual int64_t examplesPerEpoch() const = 0;
    // Examples one pass over the data yields, before drop_remainder (after data.fraction); 0 when
    // not known before the first full epoch (streaming sources).
    virtual int64_t sourceExamples() const = 0;
    virtual int64_t exampleSize() const = 0;
    virtual PipelineStats stats() const { return {}; }
    virtual PipelineChoice choice() const { return {}; }
};

// A split held in memory as floats, ready for evaluation batches.
struct EvalSet {
    int64_t count = 0;
    int64_t channels = 1, height = 1, width = 1;
    int64_t num_classes = 0;          // max label + 1
    std::vector<float> x;             // count * exampleSize()
    std::vector<int32_t> labels;
    std::string source;               // what was read, for logs
    int64_t exampleSize() const { return channels * height * width; }
};

}  // namespace trainbench::engine
