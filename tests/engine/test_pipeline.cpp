// Streaming input pipeline over real TFRecord files in a temp folder: every example once per epoch,
// order fixed by the seed (not by threads), sharding, cache, prefetch, errors with file and offset,
// and autotune.
#include "engine/data/pipeline/streamingpipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "engine/data/records/example.h"
#include "engine/data/records/tfrecord.h"
#include "engine/util/errors.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFeatures = 4;  // 1 x 2 x 2

class PipelineTest : public test::TempDirTest {
protected:
    // `files` shards holding examples 0..n-1 round robin; example i has features (i, i+0.25, i+0.5,
    // i+0.75) and label i % 5. Shard k holds examples k, k+files, ...
    std::string writeShards(int64_t n, int64_t files, const std::string& name = "train") {
        std::vector<std::unique_ptr<TFRecordWriter>> w;
        for (int64_t k = 0; k < files; ++k)
            w.push_back(std::make_unique<TFRecordWriter>((dir_ / (name + "-" + std::to_string(k) + ".tfrecord")).string()));
        for (int64_t i = 0; i < n; ++i) {
            const float x[kFeatures] = {float(i), float(i) + 0.25f, float(i) + 0.5f, float(i) + 0.75f};
            w[static_cast<size_t>(i % files)]->write(encodeExampleFloat(x, kFeatures, i % 5, {1, 2, 2}));
        }
        for (auto& writer : w) writer->close();
        return (dir_ / (name + "-*.tfrecord")).string();
    }

    DataConfig config(const std::string& pattern) {
        DataConfig d;
        d.dataset = "tfrecord";
        d.train_files = d.test_files = pattern;
        d.pipeline.shuffle_buffer = 16;
        return d;
    }

    std::unique_ptr<StreamingPipeline> make(const DataConfig& d, int64_t batch, bool shuffle, PipelineChoice c,
                                            uint64_t seed = 7, bool drop = false) {
        storage_ = std::make_shared<Storage>(d.storage);
        return std::make_unique<StreamingPipeline>(d, listSourceFiles(d, true, *storage_), batch, shuffle, drop, seed, c,
                                                   storage_);
    }

    struct Epoch {
        std::vector<int64_t> ids;
        std::vector<int64_t> sizes;
    };
    static Epoch run(StreamingPipeline& p, int64_t epoch) {
        p.startEpoch(epoch);
        Epoch e;
        for (BatchView b = p.next(); b.count > 0; b = p.next()) {
            e.sizes.push_back(b.count);
            for (int64_t k = 0; k < b.count; ++k) {
                const float* x = b.x + k * kFeatures;
                const auto id = static_cast<int64_t>(x[0]);
                EXPECT_FLOAT_EQ(x[3], float(id) + 0.75f);
                EXPECT_EQ(b.y[k], id % 5);
                e.ids.push_back(id);
            }
        }
        return e;
    }

    static std::vector<int64_t> sorted(std::vector<int64_t> v) {
        std::sort(v.begin(), v.end());
        return v;
    }
    static std::vector<int64_t> iota(int64_t n) {
        std::vector<int64_t> v(static_cast<size_t>(n));
        std::iota(v.begin(), v.end(), 0);
        return v;
    }

    std::shared_ptr<Storage> storage_;
};

PipelineChoice choice(int64_t cycle, bool parallel, int64_t map, int64_t prefetch) {
    PipelineChoice c;
    c.cycle_length = cycle;
    c.parallel_reads = parallel;
    c.map_parallel_calls = map;
    c.prefetch = prefetch;
    return c;
}

TEST_F(PipelineTest, ShapeComesFromTheExampleFeatures) {
    auto p = make(config(writeShards(10, 2)), 4, false, choice(1, false, 1, 0));
    EXPECT_EQ(p->channels(), 1);
    EXPECT_EQ(p->height(), 2);
    EXPECT_EQ(p->width(), 2);
    EXPECT_EQ(p->exampleSize(), kFeatures);
}

TEST_F(PipelineTest, UnshuffledSingleFileKeepsFileOrderAndBatchSizes) {
    auto p = make(config(writeShards(10, 1)), 4, false, choice(1, false, 1, 0));
    const Epoch e = run(*p, 0);
    EXPECT_EQ(e.ids, iota(10));
    EXPECT_EQ(e.sizes, (std::vector<int64_t>{4, 4, 2}));
    EXPECT_EQ(p->examplesPerEpoch(), 10);
    EXPECT_EQ(p->batchesPerEpoch(), 3);
}

TEST_F(PipelineTest, InterleaveTakesOneRecordFromEachFileInTurn) {
    // 3 shards: shard k holds k, k+3, ...; with cycle 3 and no shuffle the original order returns.
    auto p = make(config(writeShards(12, 3)), 5, false, choice(3, false, 1, 0));
    EXPECT_EQ(run(*p, 0).ids, iota(12));
    // Cycle 1 reads the files one after the other.
    auto q = make(config(writeShards(12, 3)), 5, false, choice(1, false, 1, 0));
    EXPECT_EQ(run(*q, 0).ids, (std::vector<int64_t>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
}

TEST_F(PipelineTest, DropRemainderServesOnlyFullBatches) {
    DataConfig d = config(writeShards(10, 2));
    auto p = make(d, 4, true, choice(2, true, 1, 2), 7, /*drop=*/true);
    const Epoch e = run(*p, 0);
    EXPECT_EQ(e.sizes, (std::vector<int64_t>{4, 4}));
    EXPECT_EQ(p->batchesPerEpoch(), 2);
    EXPECT_EQ(p->examplesPerEpoch(), 8);
}

TEST_F(PipelineTest, EveryExampleOncePerEpochInASeededOrder) {
    const std::string files = writeShards(200, 5);
    auto a = make(config(files), 16, true, choice(2, false, 1, 0), 7);
    const Epoch e0 = run(*a, 0), e1 = run(*a, 1);
    EXPECT_EQ(sorted(e0.ids), iota(200));
    EXPECT_EQ(sorted(e1.ids), iota(200));
    EXPECT_NE(e0.ids, e1.ids) << "each epoch is reshuffled";
    EXPECT_NE(e0.ids, iota(200));

    auto same = make(config(files), 16, true, choice(2, false, 1, 0), 7);
    EXPECT_EQ(run(*same, 0).ids, e0.ids) << "same seed, same order";
    auto other = make(config(files), 16, true, choice(2, false, 1, 0), 8);
    EXPECT_NE(run(*other, 0).ids, e0.ids) << "another seed, another order";
}

TEST_F(PipelineTest, ThreadsAndPrefetchDoNotChangeTheOrder) {
    const std::string files = writeShards(500, 6);
    auto ref = make(config(files), 32, true, choice(3, false, 1, 0));
    const Epoch r0 = run(*ref, 0), r1 = run(*ref, 1);
    for (const PipelineChoice& c : {choice(3, true, 1, 0), choice(3, false, 4, 0), choice(3, true, 3, 4), choice(3, true, 2, 1)}) {
        auto p = make(config(files), 32, true, c);
        EXPECT_EQ(run(*p, 0).ids, r0.ids) << "parallel " << c.parallel_reads << " map " << c.map_parallel_calls
                                          << " prefetch " << c.prefetch;
        EXPECT_EQ(run(*p, 1).ids, r1.ids);
    }
}

TEST_F(PipelineTest, ShardsByFileAndByElementPartitionTheData) {
    const std::string files = writeShards(90, 6);
    for (const ShardBy by : {ShardBy::File, ShardBy::Element}) {
        std::vector<int64_t> all;
        for (int64_t k = 0; k < 3; ++k) {
            DataConfig d = config(files);
            d.pipeline.shard_count = 3;
            d.pipeline.shard_index = k;
            d.pipeline.shard_by = by;
            auto p = make(d, 8, true, choice(2, true, 2, 2));
            const Epoch e = run(*p, 0);
            EXPECT_EQ(e.ids.size(), 30u) << shardByName(by) << " shard " << k;
            all.insert(all.end(), e.ids.begin(), e.ids.end());
        }
        EXPECT_EQ(sorted(all), iota(90)) << shardByName(by) << ": the shards are disjoint and cover everything";
    }
    DataConfig d = config(files);
    d.pipeline.shard_count = 7;
    d.pipeline.shard_by = ShardBy::File;
    EXPECT_THROW(make(d, 8, true, choice(1, false, 1, 0)), DataError) << "7 workers, 6 files";
}

TEST_F(PipelineTest, CacheServesLaterEpochsFromMemory) {
    DataConfig d = config(writeShards(100, 4));
    d.pipeline.cache = true;
    auto p = make(d, 10, true, choice(2, true, 2, 2));
    EXPECT_EQ(sorted(run(*p, 0).ids), iota(100));
    const int64_t bytesAfterFirst = storage_->stats().bytes;
    EXPECT_GT(bytesAfterFirst, 0);
    const Epoch e1 = run(*p, 1);
    EXPECT_EQ(sorted(e1.ids), iota(100));
    EXPECT_EQ(storage_->stats().bytes, bytesAfterFirst) << "the second epoch read nothing from storage";
}

TEST_F(PipelineTest, StageStatsCountWhatWasDone) {
    // No prefetch: with it, the pipeline would already be reading the next epoch (repeat).
    auto p = make(config(writeShards(64, 2)), 16, true, choice(2, true, 2, 0));
    run(*p, 0);
    const PipelineStats s = p->stats();
    auto stage = [&](const std::string& name) {
        for (const auto& st : s.stages)
            if (st.name == name) return st;
        ADD_FAILURE() << "no stage " << name;
        return StageStats{};
    };
    EXPECT_EQ(stage("read").items, 64);
    EXPECT_EQ(stage("map").items, 64);
    EXPECT_EQ(stage("map").bytes, 64 * kFeatures * 4);
    EXPECT_EQ(stage("batch").items, 4);
    EXPECT_EQ(stage("prefetch").items, 4);
    EXPECT_GT(stage("read").bytes, 64 * 16);
    EXPECT_EQ(s.storage.opens, 1 + 2) << "the shape probe, then each file once";
}

TEST_F(PipelineTest, CorruptRecordNamesFileAndOffsetOrIsSkipped) {
    const std::string pattern = writeShards(20, 1);
    const std::string path = (dir_ / "train-0.tfrecord").string();
    // Flip a byte inside the data of the third record.
    std::string bytes = test::readText(path);
    const size_t recordSize = bytes.size() / 20;
    const size_t third = 2 * recordSize;
    bytes[third + 12 + 5] ^= 0x40;
    test::writeText(path, bytes);
    for (int64_t prefetch : {0, 2}) {
        auto p = make(config(pattern), 4, false, choice(1, true, 2, prefetch));
        p->startEpoch(0);
        try {
            for (BatchView b = p->next(); b.count > 0; b = p->next()) {
            }
            FAIL() << "no error for a corrupt record";
        } catch (const DataError& e) {
            EXPECT_NE(std::string(e.what()).find(path + ": corrupted record at byte offset " + std::to_string(third)),
                      std::string::npos)
                << e.what();
            EXPECT_NE(std::string(e.what()).find("data CRC mismatch"), std::string::npos) << e.what();
        }
    }
    DataConfig d = config(pattern);
    d.pipeline.skip_corrupt = true;
    auto p = make(d, 4, false, choice(1, false, 1, 0));
    const Epoch e = run(*p, 0);
    EXPECT_EQ(e.ids.size(), 19u);
    EXPECT_EQ(std::count(e.ids.begin(), e.ids.end(), 2), 0);
    EXPECT_EQ(p->stats().skipped_records, 1);
}

TEST_F(PipelineTest, LabelsOutsideTheClassCountAreRejectedWithTheirRecord) {
    DataConfig d = config(writeShards(12, 1));
    d.num_classes = 3;  // labels go up to 4
    auto p = make(d, 4, false, choice(1, false, 1, 0));
    p->startEpoch(0);
    try {
        for (BatchView b = p->next(); b.count > 0; b = p->next()) {
        }
        FAIL() << "no error for label 3";
    } catch (const DataError& e) {
        EXPECT_NE(std::string(e.what()).find("train-0.tfrecord: record at byte offset"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("label 3 is outside [0, 3)"), std::string::npos) << e.what();
    }
}

TEST_F(PipelineTest, ReadAllLoadsASplitInFileOrder) {
    DataConfig d = config(writeShards(30, 3, "test"));
    auto storage = std::make_shared<Storage>();
    const EvalSet e = StreamingPipeline::readAll(d, listSourceFiles(d, false, *storage), storage);
    EXPECT_EQ(e.count, 30);
    EXPECT_EQ(e.num_classes, 5);
    EXPECT_EQ(e.exampleSize(), kFeatures);
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < e.count; ++i) ids.push_back(static_cast<int64_t>(e.x[static_cast<size_t>(i * kFeatures)]));
    EXPECT_EQ(sorted(ids), iota(30));
}

TEST_F(PipelineTest, MissingFilesAreNamed) {
    DataConfig d = config((dir_ / "nothing-*.tfrecord").string());
    Storage storage;
    try {
        listSourceFiles(d, true, storage);
        FAIL();
    } catch (const DataError& e) {
        EXPECT_NE(std::string(e.what()).find("nothing-*.tfrecord: no files match"), std::string::npos) << e.what();
    }
}

TEST_F(PipelineTest, AutotuneReadsInParallelWhenOpensAreSlow) {
    // 64 one-record files behind 30 ms opens: reading several at once is the only way to go fast.
    // The latency is long next to what a busy machine adds to each hand-over between threads (a few
    // ms when the cores are taken by other tests), so parallel reads win by far, not by a margin.
    DataConfig d = config(writeShards(64, 64));
    d.storage.open_latency_ms = 30;
    auto storage = std::make_shared<Storage>(d.storage);
    const PipelineChoice c = StreamingPipeline::autotune(d, listSourceFiles(d, true, *storage), 2, 1, storage, 2.0);
    EXPECT_TRUE(c.autotuned);
    EXPECT_TRUE(c.parallel_reads);
    EXPECT_GE(c.cycle_length, 4) << c.notes;
    EXPECT_GE(c.prefetch, 2);
    EXPECT_NE(c.notes.find("cycle_length 1"), std::string::npos) << c.notes;
}

TEST_F(PipelineTest, CsvNextEpochReadersLeaveLayoutsInUseAlone) {
    for (int k = 0; k < 2; ++k) {
        std::ofstream f(dir_ / ("c-" + std::to_string(k) + ".csv"));
        f << "a,b,c,d,label\n";
        for (int i = 0; i < 300; ++i) f << i << "," << i << "," << i << "," << i << "," << (i % 5) << "\n";
    }
    DataConfig d = config((dir_ / "c-*.csv").string());
    d.dataset = "csv";
    PipelineChoice c;
    c.cycle_length = 2;
    c.parallel_reads = true;
    c.map_parallel_calls = 2;
    c.prefetch = 2;
    for (int rep = 0; rep < 5; ++rep) {
        auto p = make(d, 32, rep % 2 == 0, c);
        for (int64_t e = 0; e < 3; ++e) {
            p->startEpoch(e);
            int64_t n = 0;
            for (BatchView b = p->next(); b.count > 0; b = p->next()) n += b.count;
            EXPECT_EQ(n, 600);
        }
    }
}

}  // namespace
}  // namespace trainbench::engine
