#pragma once
// The input of a prediction run (trainbench-cli predict): one split of a data section, read once,
// in order, through the same pipeline training uses — the in-memory batcher for IDX files, the
// streaming pipeline (interleave, parallel map, prefetch, storage emulation) for every other source
// — so that a prediction run waiting for its input shows it exactly as a training run does.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/data/dataconfig.h"
#include "engine/data/imagedataset.h"
#include "engine/data/pipeline/inputpipeline.h"

namespace trainbench::engine {

struct PredictionInput {
    std::shared_ptr<Storage> storage;
    std::unique_ptr<ImageDataset> idx;        // IDX: the split, held in memory (the pipeline reads it)
    std::unique_ptr<InputPipeline> pipeline;  // batches in file order; labels as stored
    int64_t channels = 1, height = 1, width = 1;
    int64_t examples = 0;                     // 0 when a streaming source is not counted before reading it
    PipelineChoice choice;
    std::string description;                  // "10000 examples of the test split, 1x28x28, from /x"
};

// split: "test" or "train". Shuffling, data.fraction and drop_remainder do not apply: every example
// of the split is predicted once, in order. Labels outside [0, classes) are a DataError naming the
// file (classes is the model's). Throws DataError (file, offset) for unreadable data and
// std::invalid_argument for a split that is neither. A replica of a prediction run reads shard
// `shardIndex` of `shardCount`: IDX examples index, index + count, ...; streaming sources as
// data.pipeline.shard_by says (whole files, or every count-th record).
PredictionInput openPredictionInput(const DataConfig& data, const std::string& split, int64_t batchSize,
                                    int64_t classes, const std::function<void(const std::string&)>& log = {},
                                    int64_t shardCount = 1, int64_t shardIndex = 0);

}  // namespace trainbench::engine
