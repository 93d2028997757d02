#pragma once
// Where the training data comes from and how it is batched.
#include <cstdint>
#include <string>

namespace trainbench::engine {

// Debian's dataset-fashion-mnist package installs the IDX files here.
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct DataConfig {
    std::string dataset = "fashion-mnist";  // only IDX datasets for now
    std::string path = kDefaultFashionMnistDir;  // folder holding the four IDX files (.gz or plain)
    std::string train_images = "train-images-idx3-ubyte";  // file stems; ".gz" is tried too
    std::string train_labels = "train-labels-idx1-ubyte";
    std::string test_images = "t10k-images-idx3-ubyte";
    std::string test_labels = "t10k-labels-idx1-ubyte";
    int64_t train_limit = 0;   // use only the first N training examples (0 = all)
    int64_t test_limit = 0;    // use only the first N test examples (0 = all)
    bool shuffle = true;       // reshuffle the training set every epoch (seeded)
    bool drop_remainder = false;  // drop the last, smaller batch of each epoch
};

}  // namespace trainbench::engine
