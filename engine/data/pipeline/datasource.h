#pragma once
// Opens what a run trains and evaluates on, from the experiment's data section: the training
// pipeline (in-memory for IDX, streaming otherwise), the test split in memory, the example shape
// and the class count, all read through one Storage.
#include <functional>
#include <memory>
#include <string>

#include "engine/data/dataconfig.h"
#include "engine/data/imagedataset.h"
#include "engine/data/pipeline/inputpipeline.h"
#include "engine/data/storage/storage.h"

namespace trainbench::engine {

struct TrainingData {
    std::shared_ptr<Storage> storage;
    std::unique_ptr<ImageDataset> trainIdx;  // owns the in-memory training set (IDX)
    std::unique_ptr<InputPipeline> train;
    EvalSet test;
    int64_t channels = 1, height = 1, width = 1;
    int64_t num_classes = 0;
    // Examples of one pass over the training data, after data.fraction (runs.train_examples);
    // 0 when a streaming source read in full is not counted before its first epoch.
    int64_t train_examples = 0;
    PipelineChoice choice;       // what the streaming pipeline runs with (autotuned or as configured)
    std::string description;     // one line for logs: what was read, examples, shape, classes
};

struct SourceFiles;
// What a streaming pipeline over `files` runs with: data.pipeline's settings, or autotune's choice
// (measured on the files, said through `log`) when data.pipeline.autotune is set.
PipelineChoice choosePipeline(const DataConfig& d, const SourceFiles& files, int64_t batch_size, uint64_t seed,
                              const std::shared_ptr<Storage>& storage, const std::function<void(const std::string&)>& log);

// Throws DataError (naming file and offset) for unreadable or inconsistent data, and for a
// data.fraction that keeps no example, or fewer than one batch when data.drop_remainder is set.
// `log` receives progress lines (autotune results); may be empty.
TrainingData openTrainingData(const DataConfig& data, int64_t batch_size, uint64_t seed,
                              const std::function<void(const std::string&)>& log = {});

}  // namespace trainbench::engine
