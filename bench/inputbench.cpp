// Input-pipeline benchmarks (issue 3's speed goals), each printing its figure next to its comparator:
//   input-read:  Fashion-MNIST TFRecord shards from the page cache through read + parse + batch,
//                against the gzip-IDX path (inflate + parse + scale to floats), same run.
//   small-files: the training set as one file per example vs 16 TFRecord shards (and vs a single
//                file), all read with 8 parallel streams from the emulated cloud object store, end to
//                end to batches.
// Data: scripts/prepare-io-data.sh.
#include "bench/inputbench.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/benchutil.h"
#include "engine/data/imagedataset.h"
#include "engine/data/pipeline/inmemorypipeline.h"
#include "engine/data/pipeline/streamingpipeline.h"

namespace trainbench::bench {

namespace {

using engine::DataConfig;
using engine::PipelineChoice;
using engine::StreamingPipeline;

int64_t fileBytes(const std::vector<std::string>& files) {
    int64_t total = 0;
    for (const auto& f : files) {
        struct stat st {};
        if (::stat(f.c_str(), &st) == 0) total += st.st_size;
    }
    return total;
}

// W1's batch by default: 128 examples (400 KB of floats, which stay in L2 while the next is made).
int64_t gBatch = 128;
int64_t batchSize() { return gBatch; }

struct PassResult {
    int64_t examples = 0;
    double seconds = 0;
    int64_t bytes = 0;
};

// One full pass over the split, to batches, no shuffle.
PassResult pipelinePass(const DataConfig& d, const PipelineChoice& c, int64_t limitFiles = 0) {
    auto storage = std::make_shared<engine::Storage>(d.storage);
    engine::SourceFiles files = engine::listSourceFiles(d, true, *storage);
    if (limitFiles > 0 && static_cast<int64_t>(files.files.size()) > limitFiles) files.files.resize(static_cast<size_t>(limitFiles));
    PassResult r;
    r.bytes = fileBytes(files.files);
    const auto t0 = Clock::now();
    StreamingPipeline p(d, std::move(files), batchSize(), /*shuffle=*/false, false, 1, c, storage);
    p.startEpoch(0);
    for (engine::BatchView b = p.next(); b.count > 0; b = p.next()) r.examples += b.count;
    r.seconds = secondsSince(t0);
    return r;
}

}  // namespace

int inputRead(const std::string& dataDir, int threads, int rounds, const std::string& side, const InputReadKnobs& k) {
    gBatch = k.batch;
    DataConfig d;
    d.dataset = "tfrecord";
    d.train_files = dataDir + "/fashion-mnist-tfrecord/train-*.tfrecord";
    PipelineChoice c;
    c.cycle_length = threads;
    c.parallel_reads = true;
    c.map_parallel_calls = threads;
    c.prefetch = 2;
    if (k.cycle > 0) c.cycle_length = k.cycle;
    if (k.map > 0) c.map_parallel_calls = k.map;
    if (k.prefetch >= 0) c.prefetch = k.prefetch;
    DataConfig idx;  // Debian's gzip'd IDX files
    std::vector<double> tfT, idxT;
    PassResult tf;
    int64_t idxExamples = 0, idxBytes = 0;
    for (int r = 0; r < rounds; ++r) {
        if (side == "tfrecord" || side == "both") {
            tf = pipelinePass(d, c);
            tfT.push_back(tf.seconds);
        }
        if (side == "idx" || side == "both") {
            // The product's IDX path: inflate + parse into memory, then batches of 1024 floats.
            const auto t0 = Clock::now();
            const engine::ImageDataset ds = engine::loadIdxDataset(idx, true);
            engine::InMemoryPipeline p(ds, batchSize(), /*shuffle=*/false, false, 1);
            p.startEpoch(0);
            idxExamples = 0;
            for (engine::BatchView b = p.next(); b.count > 0; b = p.next()) idxExamples += b.count;
            idxT.push_back(secondsSince(t0));
            idxBytes = fileBytes({ds.images_path, ds.labels_path});
        }
    }
    if (side != "both") {
        const double t = median(side == "idx" ? idxT : tfT);
        std::printf("%s only: %.3f s\n", side.c_str(), t);
        return 0;
    }
    const double tfS = median(tfT), idxS = median(idxT);
    std::printf("Fashion-MNIST training split from the page cache, to batches of %lld floats, %d thread(s), median of %d\n",
                static_cast<long long>(k.batch), threads, rounds);
    std::printf("  TFRecord shards (16), read + parse  %7.3f s  %6.2f GB/s of records  %9.0f examples/s\n", tfS,
                static_cast<double>(tf.bytes) / tfS / 1e9, static_cast<double>(tf.examples) / tfS);
    std::printf("  gzip IDX, inflate + parse + batch   %7.3f s  %6.2f GB/s of gzip     %9.0f examples/s\n", idxS,
                static_cast<double>(idxBytes) / idxS / 1e9, static_cast<double>(idxExamples) / idxS);
    std::printf("  TFRecord / gzip-IDX examples/s      %.1fx   (goals: >= 1 GB/s, >= 5x)\n",
                (static_cast<double>(tf.examples) / tfS) / (static_cast<double>(idxExamples) / idxS));
    return 0;
}

int smallFiles(const std::string& dataDir, int streams, int64_t limit) {
    PipelineChoice c;
    c.cycle_length = streams;
    c.parallel_reads = true;
    c.map_parallel_calls = 2;
    c.prefetch = 4;
    DataConfig shards;
    shards.dataset = "tfrecord";
    shards.train_files = dataDir + "/fashion-mnist-tfrecord/train-*.tfrecord";
    shards.storage = engine::storagePreset("cloud");
    DataConfig files = shards;
    files.dataset = "example_files";
    files.train_files = dataDir + "/fashion-mnist-files/train-files";
    DataConfig one = shards;
    one.train_files = dataDir + "/fashion-mnist-1shard/train-*.tfrecord";
    const PassResult s = pipelinePass(shards, c);
    const PassResult o = pipelinePass(one, c);
    const PassResult f = pipelinePass(files, c, limit);
    const double fFull = f.seconds * static_cast<double>(s.examples) / static_cast<double>(std::max<int64_t>(f.examples, 1));
    std::printf("emulated cloud object store (100 MB/s per stream, 1000 MB/s link, 20 ms per open, 10 ms per request),\n"
                "%d parallel streams, whole pipeline to batches of 128\n", streams);
    std::printf("  16 TFRecord shards       %7.2f s for %lld examples  (%9.0f examples/s)\n", s.seconds,
                static_cast<long long>(s.examples), static_cast<double>(s.examples) / s.seconds);
    std::printf("  1 TFRecord file          %7.2f s for %lld examples  (%9.0f examples/s): too few files, one stream\n",
                o.seconds, static_cast<long long>(o.examples), static_cast<double>(o.examples) / o.seconds);
    std::printf("  one file per example     %7.2f s for %lld examples  (%9.0f examples/s)%s\n", f.seconds,
                static_cast<long long>(f.examples), static_cast<double>(f.examples) / f.seconds,
                f.examples < s.examples ? (", " + std::to_string(fFull).substr(0, 6) + " s for the full set at that rate").c_str() : "");
    std::printf("  shards / files speed     %.0fx   (goal >= 20x)\n",
                (static_cast<double>(s.examples) / s.seconds) / (static_cast<double>(f.examples) / f.seconds));
    return 0;
}

}  // namespace trainbench::bench
