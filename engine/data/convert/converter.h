#pragma once
// Converts a data source into the layouts the input-pipeline comparisons need: N TFRecord shards of
// tf.train.Example (balanced by bytes, optionally zlib-compressed), or one file per example (the
// "many small files" layout). `trainbench-cli convert` is a thin wrapper around this.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/data/dataconfig.h"

namespace trainbench::engine {

struct ConvertOptions {
    // Source: a DataConfig as an experiment would give it; `train` picks the split.
    DataConfig source;
    bool train = true;
    std::string output_dir;            // created if missing
    std::string to = "tfrecord";       // "tfrecord" or "files"
    int64_t shards = 1;                // tfrecord: number of files
    std::string compression = "none";  // tfrecord: "none" or "zlib"
    std::string prefix;                // file name prefix; default "train" / "test"
    int64_t limit = 0;                 // convert only the first N examples (0 = all)
};

struct ConvertResult {
    int64_t examples = 0;
    int64_t bytes_written = 0;
    std::vector<std::string> files;  // tfrecord: the shards; files: the folder
    double seconds = 0.0;
};

// `progress(examples_done, examples_total)` is called now and then (total 0 when unknown).
// Throws DataError for unreadable input (as the pipeline would), and for write failures naming the file.
// Every output file is written whole or not at all (engine/io/atomicfilewriter.h): the shards are put
// in place when the conversion ends, so a conversion that fails or is killed midway leaves no short
// shard under a shard's name (a shard from an earlier conversion stays as it was).
ConvertResult convertData(const ConvertOptions& options,
                          const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace trainbench::engine
