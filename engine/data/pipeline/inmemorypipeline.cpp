#include "engine/data/pipeline/inmemorypipeline.h"

#include <chrono>

#include "engine/util/vectorkernels.h"

namespace trainbench::engine {

InMemoryPipeline::InMemoryPipeline(const ImageDataset& ds, int64_t batch_size, bool shuffle, bool drop_remainder,
                                   uint64_t seed)
    : batcher_(ds, batch_size, shuffle, drop_remainder, seed),
      count_(ds.count),
      x_(static_cast<size_t>(batch_size * ds.exampleSize())),
      y_(static_cast<size_t>(batch_size)) {}

BatchView InMemoryPipeline::next() {
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t n = batcher_.next(x_.data(), y_.data());
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (n > 0) {
        ++batches_;
        bytes_ += n * batcher_.exampleSize() * static_cast<int64_t>(sizeof(float));
    }
    return {x_.data(), y_.data(), n};
}

PipelineStats InMemoryPipeline::stats() const {
    PipelineStats s;
    StageStats b;
    b.name = "batch";
    b.seconds = seconds_;
    b.items = batches_;
    b.bytes = bytes_;
    s.stages.push_back(b);
    return s;
}

EvalSet toEvalSet(const ImageDataset& ds) {
    EvalSet e;
    e.count = ds.count;
    e.channels = ds.channels;
    e.height = ds.height;
    e.width = ds.width;
    e.num_classes = ds.num_classes;
    e.x.resize(ds.pixels.size());
    kernels::scaleBytes(ds.pixels.data(), e.x.data(), ds.pixels.size(), 1.0f / 255.0f);
    e.labels = ds.labels;
    e.source = ds.images_path;
    return e;
}

}  // namespace trainbench::engine
