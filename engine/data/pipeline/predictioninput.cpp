#include "engine/data/pipeline/predictioninput.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "engine/data/pipeline/datasource.h"
#include "engine/data/pipeline/inmemorypipeline.h"
#include "engine/data/pipeline/streamingpipeline.h"
#include "engine/data/storage/storage.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

std::string shape(int64_t c, int64_t h, int64_t w) {
    return std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
}

// Examples index, index + count, ... of the split, in order.
void keepShard(ImageDataset& ds, int64_t count, int64_t index) {
    const int64_t size = ds.exampleSize();
    int64_t kept = 0;
    for (int64_t i = index; i < ds.count; i += count, ++kept) {
        std::copy_n(ds.pixels.begin() + i * size, size, ds.pixels.begin() + kept * size);
        ds.labels[static_cast<size_t>(kept)] = ds.labels[static_cast<size_t>(i)];
    }
    ds.count = kept;
    ds.pixels.resize(static_cast<size_t>(kept * size));
    ds.labels.resize(static_cast<size_t>(kept));
}

}  // namespace

PredictionInput openPredictionInput(const DataConfig& data, const std::string& split, int64_t batchSize,
                                    int64_t classes, const std::function<void(const std::string&)>& log,
                                    int64_t shardCount, int64_t shardIndex) {
    if (shardCount < 1 || shardIndex < 0 || shardIndex >= shardCount)
        throw std::invalid_argument("shard " + std::to_string(shardIndex) + " of " + std::to_string(shardCount));
    if (split != "test" && split != "train")
        throw std::invalid_argument("split '" + split + "': say test or train");
    if (data.dataset == "shape")
        throw DataError("data.dataset 'shape' describes the data by its shape alone: there is nothing to predict");
    const bool train = split == "train";
    PredictionInput in;
    in.storage = std::make_shared<Storage>(data.storage);
    // The seed orders nothing here: no shuffling, no subset.
    constexpr uint64_t kSeed = 0;
    if (!usesStreamingPipeline(data)) {
        in.idx = std::make_unique<ImageDataset>(loadIdxDataset(data, train, *in.storage));
        if (shardCount > 1) keepShard(*in.idx, shardCount, shardIndex);
        const ImageDataset& ds = *in.idx;
        if (ds.num_classes > classes)
            throw DataError(data.path + ": a " + split + " label is " + std::to_string(ds.num_classes - 1) +
                            ", the model has " + std::to_string(classes) + " classes");
        in.channels = ds.channels;
        in.height = ds.height;
        in.width = ds.width;
        in.examples = ds.count;
        in.pipeline = std::make_unique<InMemoryPipeline>(ds, batchSize, /*shuffle=*/false, /*drop_remainder=*/false, kSeed);
        in.description = std::to_string(ds.count) + " examples of the " + split + " split, " +
                         shape(ds.channels, ds.height, ds.width) + ", from " + data.path;
        return in;
    }
    DataConfig d = data;
    d.num_classes = classes;  // the streaming reader checks every label against it
    d.pipeline.shuffle_files = false;  // predictions come in file order
    d.pipeline.shard_count = shardCount;
    d.pipeline.shard_index = shardIndex;
    SourceFiles files = listSourceFiles(d, train, *in.storage);
    const std::string listed = files.description;
    in.examples = files.examples;
    const PipelineChoice choice = choosePipeline(d, files, batchSize, kSeed, in.storage, log);
    auto pipeline = std::make_unique<StreamingPipeline>(d, std::move(files), batchSize, /*shuffle=*/false,
                                                        /*drop_remainder=*/false, kSeed, choice, in.storage);
    in.channels = pipeline->channels();
    in.height = pipeline->height();
    in.width = pipeline->width();
    in.choice = pipeline->choice();
    in.pipeline = std::move(pipeline);
    in.description = "the " + split + " split: " + listed + ", " + shape(in.channels, in.height, in.width);
    return in;
}

}  // namespace trainbench::engine
