#include "engine/data/pipeline/datasource.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "engine/data/pipeline/inmemorypipeline.h"
#include "engine/data/pipeline/streamingpipeline.h"
#include "engine/data/pipeline/trainsubset.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

std::string shortNumber(double v) {
    std::ostringstream o;
    o << std::setprecision(6) << v;
    return o.str();
}

// data.fraction must leave a step to take: at least one example, and a whole batch when the
// remainder of each epoch is dropped.
void checkSubset(const DataConfig& data, int64_t total, int64_t kept, int64_t batchSize) {
    const std::string what = "data.fraction " + shortNumber(data.fraction) + " keeps " + std::to_string(kept) +
                             " of " + std::to_string(total) + " training examples";
    if (kept == 0) throw DataError(what + ": raise data.fraction to at least " +
                                   shortNumber(std::ceil(1e4 / static_cast<double>(total)) / 1e4));
    if (data.drop_remainder && kept < batchSize)
        throw DataError(what + ", fewer than one global batch of " + std::to_string(batchSize) +
                        ": with data.drop_remainder no step would run (raise data.fraction to at least " +
                        shortNumber(std::min(1.0, std::ceil(1e4 * static_cast<double>(batchSize) / static_cast<double>(total)) / 1e4)) +
                        ", or lower train.batch_size)");
}

std::string subsetNote(const DataConfig& data, int64_t total, int64_t kept) {
    return " (data.fraction " + shortNumber(data.fraction) + ": " + std::to_string(kept) + " of " + std::to_string(total) +
           ", subset seed " + std::to_string(data.subset_seed) + ")";
}

}  // namespace

PipelineChoice choosePipeline(const DataConfig& d, const SourceFiles& files, int64_t batch_size, uint64_t seed,
                              const std::shared_ptr<Storage>& storage, const std::function<void(const std::string&)>& log) {
    PipelineChoice choice;
    choice.cycle_length = d.pipeline.cycle_length;
    choice.parallel_reads = d.pipeline.parallel_reads;
    choice.map_parallel_calls = d.pipeline.map_parallel_calls;
    choice.prefetch = d.pipeline.prefetch;
    if (!d.pipeline.autotune) return choice;
    choice = StreamingPipeline::autotune(d, files, batch_size, seed, storage);
    if (log) log("autotune (" + std::to_string(choice.autotune_seconds).substr(0, 4) + " s): cycle_length " +
                 std::to_string(choice.cycle_length) + (choice.parallel_reads ? " parallel" : "") +
                 ", map_parallel_calls " + std::to_string(choice.map_parallel_calls) + ", prefetch " +
                 std::to_string(choice.prefetch));
    return choice;
}

TrainingData openTrainingData(const DataConfig& data, int64_t batch_size, uint64_t seed,
                              const std::function<void(const std::string&)>& log) {
    if (data.dataset == "shape")
        throw DataError("data.dataset 'shape' describes the data by its shape alone: there is nothing to train on "
                        "(estimate the experiment with `trainbench-cli estimate FILE`)");
    TrainingData out;
    out.storage = std::make_shared<Storage>(data.storage);
    if (!usesStreamingPipeline(data)) {
        out.trainIdx = std::make_unique<ImageDataset>(loadIdxDataset(data, /*train=*/true, *out.storage));
        const int64_t total = out.trainIdx->count;
        keepSubset(*out.trainIdx, data.fraction, data.subset_seed);
        checkSubset(data, total, out.trainIdx->count, batch_size);
        out.train_examples = out.trainIdx->count;
        const ImageDataset test = loadIdxDataset(data, /*train=*/false, *out.storage);
        out.test = toEvalSet(test);
        const ImageDataset& tr = *out.trainIdx;
        out.channels = tr.channels;
        out.height = tr.height;
        out.width = tr.width;
        out.num_classes = data.num_classes > 0 ? data.num_classes : std::max(tr.num_classes, test.num_classes);
        out.train = std::make_unique<InMemoryPipeline>(tr, batch_size, data.shuffle, data.drop_remainder, seed,
                                                       data.pipeline.prefetch);
        out.description = std::to_string(tr.count) + " training" +
                          (data.fraction < 1.0 ? subsetNote(data, total, tr.count) : std::string()) + " and " +
                          std::to_string(test.count) + " test examples, " + std::to_string(tr.channels) + "x" +
                          std::to_string(tr.height) + "x" + std::to_string(tr.width) + ", " +
                          std::to_string(out.num_classes) + " classes, from " + data.path;
        return out;
    }

    // Test split first: it fixes the class count the training labels are checked against.
    DataConfig d = data;
    out.test = StreamingPipeline::readAll(d, listSourceFiles(d, /*train=*/false, *out.storage), out.storage);
    if (out.test.count == 0) throw DataError(data.test_files + ": the test split holds no examples");
    if (data.num_classes > 0 && out.test.num_classes > data.num_classes)
        throw DataError(data.test_files + ": a test label is " + std::to_string(out.test.num_classes - 1) +
                        ", outside data.num_classes = " + std::to_string(data.num_classes));
    out.num_classes = data.num_classes > 0 ? data.num_classes : out.test.num_classes;
    if (out.num_classes < 2)
        throw DataError(data.test_files + ": the test labels name fewer than two classes; set data.num_classes");
    d.num_classes = out.num_classes;

    SourceFiles train = listSourceFiles(d, /*train=*/true, *out.storage);
    std::string trainDescription = train.description;
    if (d.fraction < 1.0) {
        // The subset is drawn from every record's label, so the whole source is read once first.
        PipelineChoice plain;
        StreamingPipeline all(d, train, batch_size, false, false, seed, plain, out.storage);
        const std::vector<std::vector<int32_t>> labels = all.readLabels();
        int64_t total = 0;
        for (const auto& file : labels) total += static_cast<int64_t>(file.size());
        train = keepSubset(std::move(train), labels, d.fraction, d.subset_seed);
        checkSubset(d, total, train.examples, batch_size);
        trainDescription += subsetNote(d, total, train.examples);
        if (log) log("data.fraction " + shortNumber(d.fraction) + ": training on " + std::to_string(train.examples) +
                     " of " + std::to_string(total) + " examples, from " + std::to_string(train.files.size()) + " of " +
                     std::to_string(labels.size()) + " file(s)");
    }
    out.train_examples = train.examples;
    const PipelineChoice choice = choosePipeline(d, train, batch_size, seed, out.storage, log);
    auto pipeline = std::make_unique<StreamingPipeline>(d, std::move(train), batch_size, d.shuffle, d.drop_remainder,
                                                        seed, choice, out.storage);
    if (pipeline->exampleSize() != out.test.exampleSize())
        throw DataError("training examples have " + std::to_string(pipeline->exampleSize()) + " features but test examples " +
                        std::to_string(out.test.exampleSize()) + " (" + data.train_files + " vs " + data.test_files + ")");
    out.channels = pipeline->channels();
    out.height = pipeline->height();
    out.width = pipeline->width();
    out.choice = pipeline->choice();
    out.train = std::move(pipeline);
    out.description = trainDescription + "; " + std::to_string(out.test.count) + " test examples; " +
                      std::to_string(out.channels) + "x" + std::to_string(out.height) + "x" + std::to_string(out.width) +
                      ", " + std::to_string(out.num_classes) + " classes";
    return out;
}

}  // namespace trainbench::engine
