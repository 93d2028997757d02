#pragma once
// A labelled image dataset held in memory (MNIST-like: u8 pixels, small integer labels), and the
// loader that builds one from an images/labels pair of IDX files.
#include "engine/data/dataconfig.h"
#include "engine/data/storage/storage.h"

#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::engine {

struct ImageDataset {
    int64_t count = 0;
    int channels = 1, height = 0, width = 0;
    int num_classes = 0;          // max label + 1 over the whole file (before any limit)
    std::vector<uint8_t> pixels;  // count * channels * height * width, row-major (NCHW)
    std::vector<int32_t> labels;  // count labels in [0, num_classes)
    std::string images_path, labels_path;  // the files actually read

    int64_t exampleSize() const { return int64_t{channels} * height * width; }
};

// Loads the training (train = true) or test split named by `cfg`. Each file is looked up in
// cfg.path as "<stem>.gz", then "<stem>" (a stem that already ends in ".gz", or an absolute one,
// is used as given). Applies cfg.train_limit / cfg.test_limit (first N examples; 0 = all).
// Throws DataError naming the file(s) for a missing file, a malformed IDX file, images that are
// not u8 N x H x W, labels that are not u8 N, differing counts, or fewer than two classes.
ImageDataset loadIdxDataset(const DataConfig& cfg, bool train);
// The same, reading the files through `storage` (emulated storage applies).
ImageDataset loadIdxDataset(const DataConfig& cfg, bool train, Storage& storage);
ImageDataset loadIdxDataset(const DataConfig& cfg, bool train, Storage* storage);

// One line for logs: "60000 examples, 1x28x28 u8, 10 classes (images ..., labels ...)".
std::string describe(const ImageDataset& ds);

}  // namespace trainbench::engine
