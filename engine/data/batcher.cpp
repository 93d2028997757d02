#include "engine/data/batcher.h"

#include "engine/util/vectorkernels.h"

#include "engine/util/rng.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace trainbench::engine {
namespace {

// Below this many pixels per thread, a parallel region costs more than it saves.
constexpr size_t kParallelBytes = 16384;

// The hot loop of the input pipeline (a 128 x 784 batch is 100k conversions per step), vectorised
// per CPU; multiplying by the constant 1/255 avoids a division per pixel and is exactly rounded, so
// results are identical everywhere.
void scalePixels(const uint8_t* src, float* dst, int64_t n) {
    kernels::scaleBytes(src, dst, static_cast<size_t>(n), 1.0f / 255.0f);
}

}  // namespace

Batcher::Batcher(const ImageDataset& ds, int64_t batch_size, bool shuffle, bool drop_remainder, uint64_t seed)
    : ds_(ds),
      batch_size_(batch_size),
      example_size_(ds.exampleSize()),
      shuffle_(shuffle),
      drop_remainder_(drop_remainder),
      seed_(seed) {
    if (batch_size <= 0) throw std::invalid_argument("batch size must be > 0, got " + std::to_string(batch_size));
    if (ds.count < 0 || static_cast<int64_t>(ds.labels.size()) != ds.count ||
        static_cast<int64_t>(ds.pixels.size()) != ds.count * example_size_)
        throw std::invalid_argument("inconsistent dataset: count " + std::to_string(ds.count) + ", " +
                                    std::to_string(ds.labels.size()) + " labels, " +
                                    std::to_string(ds.pixels.size()) + " pixel bytes for " +
                                    std::to_string(example_size_) + " per example");
    order_.resize(static_cast<size_t>(ds.count));
    startEpoch(0);
}

void Batcher::startEpoch(int64_t epoch) {
    epoch_ = epoch;
    pos_ = 0;
    // Rebuilt from the identity every epoch, so an epoch's order depends only on (seed, epoch),
    // not on which epochs ran before: a resumed run sees the same batches as an uninterrupted one.
    std::iota(order_.begin(), order_.end(), int64_t{0});
    if (!shuffle_) return;
    Rng rng(deriveSeed(seed_, kSeedShuffle, static_cast<uint64_t>(epoch)));
    for (size_t i = order_.size(); i > 1; --i) {
        const size_t j = static_cast<size_t>(rng.below(i));
        std::swap(order_[i - 1], order_[j]);
    }
}

int64_t Batcher::examplesPerEpoch() const {
    return drop_remainder_ ? ds_.count / batch_size_ * batch_size_ : ds_.count;
}

int64_t Batcher::batchesPerEpoch() const {
    return drop_remainder_ ? ds_.count / batch_size_ : (ds_.count + batch_size_ - 1) / batch_size_;
}

int64_t Batcher::next(float* x, int32_t* y) {
    const int64_t n = std::min(batch_size_, examplesPerEpoch() - pos_);
    if (n <= 0) return 0;
    const uint8_t* pixels = ds_.pixels.data();
    // Rows are independent; split them over the threads when the batch is big enough to pay for it.
    const size_t minRows = std::max<size_t>(1, kParallelBytes / static_cast<size_t>(std::max<int64_t>(example_size_, 1)));
    kernels::parallelFor(static_cast<size_t>(n), minRows, [&](size_t b, size_t e) {
        for (size_t k = b; k < e; ++k) {
            const int64_t idx = order_[static_cast<size_t>(pos_) + k];
            scalePixels(pixels + idx * example_size_, x + static_cast<int64_t>(k) * example_size_, example_size_);
            y[k] = ds_.labels[static_cast<size_t>(idx)];
        }
    });
    pos_ += n;
    return n;
}

void Batcher::prefetchNext() const {
    const uint8_t* pixels = ds_.pixels.data();
    const int64_t ahead = std::min(batch_size_, examplesPerEpoch() - pos_);
    for (int64_t k = 0; k < ahead; ++k) {
        const uint8_t* row = pixels + order_[static_cast<size_t>(pos_ + k)] * example_size_;
        for (int64_t off = 0; off < example_size_; off += 64) __builtin_prefetch(row + off);
    }
}

}  // namespace trainbench::engine
