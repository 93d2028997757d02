#pragma once
// Where the training data comes from, how it is read and how it is batched: the experiment file's
// `data` section (docs/experiment-format.md).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/data/sources/csv.h"
#include "engine/data/storage/storage.h"

namespace trainbench::engine {

// Debian's dataset-fashion-mnist package installs the IDX files here.
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// How a worker's share of the data is cut (data.pipeline.shard_by).
enum class ShardBy {
    File,     // whole files per worker: reads 1/N of the bytes
    Element,  // every Nth record: reads everything
};
// The experiment file's text: "file", "element".
constexpr std::string_view shardByName(ShardBy by) { return by == ShardBy::File ? "file" : "element"; }
constexpr std::optional<ShardBy> parseShardBy(std::string_view name) {
    if (name == "file") return ShardBy::File;
    if (name == "element") return ShardBy::Element;
    return std::nullopt;
}

// The tf.data-like input pipeline, in its fixed stage order:
//   list files -> [shard by file] -> interleave -> [shard by element] -> [cache] -> shuffle
//   -> map (parse/decode) fused with batch -> prefetch, repeated once per epoch.
struct PipelineConfig {
    bool shuffle_files = true;        // reorder the file list every epoch (seeded)
    int64_t cycle_length = 1;         // files read at once, one record from each in turn
    bool parallel_reads = false;      // each of the cycle_length files has its own reader thread
    int64_t map_parallel_calls = 1;   // threads decoding records (1 = in the pipeline's own thread)
    int64_t shuffle_buffer = 10000;   // records held for shuffling (used when data.shuffle is true)
    int64_t prefetch = 2;             // batches made ahead by a background thread (0 = made on demand)
    bool cache = false;               // keep the records in memory after the first epoch
    int64_t shard_count = 1;          // multi-worker: this worker reads 1/shard_count of the data
    int64_t shard_index = 0;
    ShardBy shard_by = ShardBy::File;
    bool autotune = false;            // choose cycle_length, map_parallel_calls and prefetch by measuring
    bool skip_corrupt = false;        // count and skip corrupt records instead of failing
    std::string compression = "none"; // TFRecord files: "none" or "zlib"
};

// A data set described by its shape alone ("dataset": "shape"): enough to estimate a model on it
// (trainbench-cli estimate) without the data, e.g. ImageNet's 1,281,167 images of 3x224x224.
struct ShapeOnlyData {
    // Token ids per example (a transformer's input): an example is [sequence] ids, and channels,
    // height and width are not used. 0: an example is an image.
    int64_t sequence = 0;
    int64_t channels = 3;
    int64_t height = 224;
    int64_t width = 224;
    int64_t classes = 1000;
    int64_t train_examples = 1281167;
};

struct DataConfig {
    // "fashion-mnist" / "idx": IDX files in `path` (held in memory, batched in place);
    // "tfrecord": TFRecord shards of tf.train.Example; "csv": CSV files; "images": an image folder
    // (one sub-folder per class); "example_files": one serialized tf.train.Example per file.
    std::string dataset = "fashion-mnist";
    std::string path = kDefaultFashionMnistDir;  // folder holding the four IDX files (.gz or plain)
    std::string train_images = "train-images-idx3-ubyte";  // file stems; ".gz" is tried too
    std::string train_labels = "train-labels-idx1-ubyte";
    std::string test_images = "t10k-images-idx3-ubyte";
    std::string test_labels = "t10k-labels-idx1-ubyte";
    std::string train_files;   // non-IDX sources: a folder, a glob or a file
    std::string test_files;
    int channels = 1;          // image folders: 1 = grey, 3 = RGB
    int64_t num_classes = 0;   // 0 = one more than the largest label in the test split
    int64_t train_limit = 0;   // use only the first N training examples (0 = all; IDX only)
    int64_t test_limit = 0;    // use only the first N test examples (0 = all)
    // Train on this fraction of the training set (after train_limit), in (0, 1]: the first
    // round(fraction x N) examples of an order drawn from subset_seed alone (datasubset.h), so every
    // run seed trains on the same examples and smaller fractions are subsets of larger ones.
    double fraction = 1.0;
    uint64_t subset_seed = 0;
    bool shuffle = true;       // reshuffle the training set every epoch (seeded)
    bool drop_remainder = false;  // drop the last, smaller batch of each epoch
    ShapeOnlyData shape;  // dataset "shape"
    CsvOptions csv;
    PipelineConfig pipeline;
    StorageConfig storage;  // under every file read, IDX included
};

// IDX data sets are small enough to hold in memory and are batched in place (from_tensor_slices
// + shuffle + batch, fused); every other source streams through the pipeline.
inline bool usesStreamingPipeline(const DataConfig& d) { return d.dataset != "fashion-mnist" && d.dataset != "idx"; }

}  // namespace trainbench::engine
