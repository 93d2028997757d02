#pragma once
// Cuts an in-memory ImageDataset into batches of float inputs (NCHW, pixels scaled to [0, 1]) and
// int32 labels, in a seeded per-epoch order that is the same on every machine. It is the source
// stage of the input pipeline, so it depends on nothing but the dataset and Rng.
#include "engine/data/imagedataset.h"

#include <cstdint>
#include <vector>

namespace trainbench::engine {

class Batcher {
public:
    // `ds` must outlive the batcher (it is read, never copied). batch_size must be > 0.
    // Epoch 0 is started, so next() can be called straight away.
    Batcher(const ImageDataset& ds, int64_t batch_size, bool shuffle, bool drop_remainder, uint64_t seed);

    // Rewinds to the first batch of `epoch`. With shuffle the order is a Fisher-Yates permutation
    // drawn from Rng(deriveSeed(seed, kSeedShuffle, epoch)); without it, the file order.
    void startEpoch(int64_t epoch);

    // Fills x with count * exampleSize() floats (pixel / 255, NCHW) and y with count labels, for
    // count up to batchSize(); returns count, or 0 when the epoch is over. With drop_remainder
    // every batch is full and the leftover examples of the epoch are skipped.
    int64_t next(float* x, int32_t* y);
    // Asks the memory system for the rows of the next batch (scattered over the whole dataset,
    // ~400 ns each when cold). Call it late in a step, so they arrive while the step finishes
    // instead of being evicted again by the step's own data.
    void prefetchNext() const;

    int64_t batchesPerEpoch() const;
    int64_t examplesPerEpoch() const;

    int64_t batchSize() const { return batch_size_; }
    int64_t exampleSize() const { return example_size_; }  // floats per example: C * H * W
    int64_t epoch() const { return epoch_; }
    // The example indices of the current epoch, in the order they are served.
    const std::vector<int64_t>& order() const { return order_; }

private:
    const ImageDataset& ds_;
    int64_t batch_size_;
    int64_t example_size_;
    bool shuffle_;
    bool drop_remainder_;
    uint64_t seed_;
    int64_t epoch_ = 0;
    int64_t pos_ = 0;  // next position in order_
    std::vector<int64_t> order_;
};

}  // namespace trainbench::engine
