// data.fraction: the subset's size, nesting, class balance and independence from the run's seed,
// for every data source (IDX in memory, TFRecord shards, CSV, image folders, one-example files)
// read end to end through openTrainingData; shards splitting exactly the subset; and the errors
// for a fraction that leaves nothing to train on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/data/datasubset.h"
#include "engine/data/pipeline/datasource.h"
#include "engine/data/records/example.h"
#include "engine/data/records/tfrecord.h"
#include "engine/data/sources/imagefolder.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;
using test::errorOf;
using test::writeText;

// Unbalanced classes: half of the examples are class 0, 30 % class 1, 20 % class 2.
int32_t labelOf(int64_t id) { return id % 10 < 5 ? 0 : id % 10 < 8 ? 1 : 2; }

std::vector<int32_t> labelsFor(int64_t n, int32_t (*label)(int64_t)) {
    std::vector<int32_t> out;
    for (int64_t i = 0; i < n; ++i) out.push_back(label(i));
    return out;
}

std::map<int32_t, int64_t> classCounts(const std::vector<int32_t>& labels, const std::vector<int64_t>& kept) {
    std::map<int32_t, int64_t> out;
    for (int64_t i : kept) ++out[labels[static_cast<size_t>(i)]];
    return out;
}

TEST(DataSubset, SizeIsTheRoundedFractionOfTheExamples) {
    EXPECT_EQ(subsetSize(60000, 1.0 / 32), 1875);
    EXPECT_EQ(subsetSize(60000, 1.0), 60000);
    EXPECT_EQ(subsetSize(10, 0.25), 3);  // 2.5: halves round up
    EXPECT_EQ(subsetSize(10, 0.24), 2);
    EXPECT_EQ(subsetSize(10, 0.26), 3);
    EXPECT_EQ(subsetSize(7, 0.01), 0);
    EXPECT_THROW(subsetSize(10, 0.0), std::invalid_argument);
    EXPECT_THROW(subsetSize(10, 1.5), std::invalid_argument);
    EXPECT_THROW(subsetSize(10, std::nan("")), std::invalid_argument);
}

TEST(DataSubset, SmallerFractionsAreInsideLargerOnes) {
    const std::vector<int32_t> labels = labelsFor(1000, labelOf);
    std::vector<int64_t> larger = subsetIndices(labels, 1.0, 0);
    ASSERT_EQ(larger.size(), 1000u);
    for (double f : {0.5, 0.25, 0.125, 0.0625, 0.03125}) {
        const std::vector<int64_t> smaller = subsetIndices(labels, f, 0);
        EXPECT_EQ(static_cast<int64_t>(smaller.size()), subsetSize(1000, f));
        EXPECT_TRUE(std::is_sorted(smaller.begin(), smaller.end()));
        EXPECT_TRUE(std::includes(larger.begin(), larger.end(), smaller.begin(), smaller.end())) << f;
        larger = smaller;
    }
}

TEST(DataSubset, EveryPrefixHoldsEachClassWithinOneOfItsShare) {
    // Unbalanced (50/30/20 %) and balanced (10 classes of 6000, Fashion-MNIST's training set).
    for (const auto& labels : {labelsFor(1000, labelOf), labelsFor(60000, [](int64_t i) { return int32_t(i % 10); })}) {
        std::map<int32_t, int64_t> sizes;
        for (int32_t y : labels) ++sizes[y];
        const std::vector<int64_t> order = subsetOrder(labels, 3);
        const auto n = static_cast<double>(labels.size());
        std::map<int32_t, int64_t> held;
        for (size_t k = 0; k < order.size(); ++k) {
            ++held[labels[static_cast<size_t>(order[k])]];
            for (const auto& [c, size] : sizes) {
                const double share = static_cast<double>(k + 1) * static_cast<double>(size) / n;
                ASSERT_LE(std::fabs(static_cast<double>(held[c]) - share), 1.0)
                    << "class " << c << " after " << k + 1 << " of " << labels.size();
            }
        }
    }
    // 1/32 of Fashion-MNIST: 1875 = 187.5 per class.
    const std::vector<int32_t> fmnist = labelsFor(60000, [](int64_t i) { return int32_t(i % 10); });
    for (const auto& [c, count] : classCounts(fmnist, subsetIndices(fmnist, 1.0 / 32, 0))) {
        EXPECT_GE(count, 187) << c;
        EXPECT_LE(count, 188) << c;
    }
}

TEST(DataSubset, TheSubsetSeedChoosesTheExamplesAndUnknownLabelsStillWork) {
    const std::vector<int32_t> labels = labelsFor(1000, labelOf);
    EXPECT_EQ(subsetIndices(labels, 0.1, 5), subsetIndices(labels, 0.1, 5));
    EXPECT_NE(subsetIndices(labels, 0.1, 5), subsetIndices(labels, 0.1, 6));
    const std::vector<int32_t> unknown(1000, -1);
    const std::vector<int64_t> kept = subsetIndices(unknown, 0.1, 5);
    EXPECT_EQ(kept.size(), 100u);
    EXPECT_EQ(std::set<int64_t>(kept.begin(), kept.end()).size(), 100u);
    EXPECT_GT(kept.back(), 500);  // spread over the set, not its first tenth
}

// ---- Every data source, end to end ------------------------------------------------------------------

constexpr int64_t kTrain = 240, kTest = 30;

class DataSubsetSourceTest : public test::TempDirTest {
protected:
    // Example i carries i in its first feature (pixels: i / 255) and labelOf(i).
    void writeIdx(const std::string& stem, int64_t n) {
        std::string images = {0, 0, 8, 3}, labels = {0, 0, 8, 1};
        for (int64_t d : {n, int64_t{2}, int64_t{2}})
            for (int s = 24; s >= 0; s -= 8) images += static_cast<char>((d >> s) & 0xff);
        for (int s = 24; s >= 0; s -= 8) labels += static_cast<char>((n >> s) & 0xff);
        for (int64_t i = 0; i < n; ++i) {
            images += {static_cast<char>(i), 0, 0, 0};
            labels += static_cast<char>(labelOf(i));
        }
        writeText(dir_ / (stem + "-images"), images);
        writeText(dir_ / (stem + "-labels"), labels);
    }
    DataConfig idx() {
        writeIdx("train", kTrain);
        writeIdx("test", kTest);
        DataConfig d;
        d.dataset = "idx";
        d.path = dir_.string();
        d.train_images = "train-images";
        d.train_labels = "train-labels";
        d.test_images = "test-images";
        d.test_labels = "test-labels";
        return d;
    }
    std::string writeShards(const std::string& name, int64_t n, int64_t files) {
        std::vector<std::unique_ptr<TFRecordWriter>> w;
        for (int64_t k = 0; k < files; ++k)
            w.push_back(std::make_unique<TFRecordWriter>(path(name + "-" + std::to_string(k) + ".tfrecord")));
        for (int64_t i = 0; i < n; ++i) {
            const float x[4] = {float(i), 0.5f, 0.5f, 0.5f};
            w[static_cast<size_t>(i % files)]->write(encodeExampleFloat(x, 4, labelOf(i), {1, 2, 2}));
        }
        for (auto& writer : w) writer->close();
        return path(name + "-*.tfrecord");
    }
    DataConfig tfrecord(int64_t files = 4) {
        DataConfig d;
        d.dataset = "tfrecord";
        d.train_files = writeShards("train", kTrain, files);
        d.test_files = writeShards("test", kTest, 1);
        return d;
    }
    DataConfig csv() {
        for (auto [name, n] : {std::pair<std::string, int64_t>{"train", kTrain}, {"test", kTest}}) {
            std::string text;
            for (int64_t i = 0; i < n; ++i) text += std::to_string(i) + ",0.5," + std::to_string(labelOf(i)) + "\n";
            writeText(dir_ / (name + ".csv"), text);
        }
        DataConfig d;
        d.dataset = "csv";
        d.train_files = path("train.csv");
        d.test_files = path("test.csv");
        return d;
    }
    DataConfig images() {
        for (auto [name, n] : {std::pair<std::string, int64_t>{"train", kTrain}, {"test", kTest}})
            for (int64_t i = 0; i < n; ++i) {
                const fs::path folder = dir_ / name / ("class" + std::to_string(labelOf(i)));
                fs::create_directories(folder);
                const uint8_t px = static_cast<uint8_t>(i);
                writeText(folder / (std::to_string(1000 + i) + ".png"), encodePng(&px, 1, 1, 1));
            }
        DataConfig d;
        d.dataset = "images";
        d.train_files = path("train");
        d.test_files = path("test");
        return d;
    }
    DataConfig exampleFiles() {
        for (auto [name, n] : {std::pair<std::string, int64_t>{"train", kTrain}, {"test", kTest}}) {
            fs::create_directories(dir_ / name);
            for (int64_t i = 0; i < n; ++i) {
                const float x[2] = {float(i), 0.5f};
                writeText(dir_ / name / (std::to_string(1000 + i) + ".pb"), encodeExampleFloat(x, 2, labelOf(i)));
            }
        }
        DataConfig d;
        d.dataset = "example_files";
        d.train_files = path("train/*.pb");
        d.test_files = path("test/*.pb");
        return d;
    }

    // The ids of one epoch's examples (each checked against its label), and the data's counts.
    struct Epoch {
        std::vector<int64_t> ids;  // sorted
        int64_t trainExamples = 0, testExamples = 0;
    };
    static Epoch epoch(const DataConfig& d, uint64_t seed, int64_t batch = 16) {
        TrainingData data = openTrainingData(d, batch, seed);
        Epoch e;
        e.trainExamples = data.train_examples;
        e.testExamples = data.test.count;
        const bool pixels = d.dataset == "idx" || d.dataset == "images";
        data.train->startEpoch(0);
        for (BatchView b = data.train->next(); b.count > 0; b = data.train->next())
            for (int64_t k = 0; k < b.count; ++k) {
                const float first = b.x[k * data.train->exampleSize()];
                const auto id = static_cast<int64_t>(std::lround(pixels ? first * 255.0f : first));
                EXPECT_EQ(b.y[k], labelOf(id)) << "example " << id;
                e.ids.push_back(id);
            }
        std::sort(e.ids.begin(), e.ids.end());
        return e;
    }

    // What every source must do: the subset's size, the same examples for every run seed, the
    // smaller fraction inside the larger, classes in proportion, the test set whole.
    static void expectSubsets(DataConfig d) {
        d.fraction = 0.25;
        const Epoch quarter = epoch(d, 1);
        EXPECT_EQ(quarter.ids.size(), 60u);
        EXPECT_EQ(std::set<int64_t>(quarter.ids.begin(), quarter.ids.end()).size(), 60u) << "an example twice";
        EXPECT_EQ(quarter.trainExamples, 60);
        EXPECT_EQ(quarter.testExamples, kTest);
        EXPECT_EQ(epoch(d, 99).ids, quarter.ids) << "another run seed, other examples";
        std::map<int32_t, int64_t> classes;
        for (int64_t id : quarter.ids) ++classes[labelOf(id)];
        EXPECT_EQ(classes, (std::map<int32_t, int64_t>{{0, 30}, {1, 18}, {2, 12}}));
        d.fraction = 0.5;
        const Epoch half = epoch(d, 1);
        EXPECT_EQ(half.ids.size(), 120u);
        EXPECT_TRUE(std::includes(half.ids.begin(), half.ids.end(), quarter.ids.begin(), quarter.ids.end()));
        d.fraction = 1.0;
        EXPECT_EQ(epoch(d, 1).ids.size(), static_cast<size_t>(kTrain));
    }
};

TEST_F(DataSubsetSourceTest, IdxInMemory) { expectSubsets(idx()); }
TEST_F(DataSubsetSourceTest, TfRecordShards) { expectSubsets(tfrecord()); }
TEST_F(DataSubsetSourceTest, Csv) { expectSubsets(csv()); }
TEST_F(DataSubsetSourceTest, ImageFolders) { expectSubsets(images()); }
TEST_F(DataSubsetSourceTest, OneExampleFiles) { expectSubsets(exampleFiles()); }

TEST_F(DataSubsetSourceTest, TheSameExamplesFromEverySource) {
    // One order of the same labels, whatever holds them: a subset does not depend on the format.
    DataConfig d = idx();
    d.fraction = 0.125;
    const std::vector<int64_t> fromIdx = epoch(d, 1).ids;
    DataConfig c = csv();
    c.fraction = 0.125;
    EXPECT_EQ(epoch(c, 1).ids, fromIdx);
    DataConfig t = tfrecord(/*files=*/1);
    t.fraction = 0.125;
    EXPECT_EQ(epoch(t, 1).ids, fromIdx);
}

TEST_F(DataSubsetSourceTest, ShardsSplitExactlyTheSubset) {
    for (const ShardBy by : {ShardBy::File, ShardBy::Element}) {
        SCOPED_TRACE(std::string(shardByName(by)));
        DataConfig d = tfrecord(/*files=*/4);
        d.fraction = 0.5;
        const std::vector<int64_t> subset = epoch(d, 1).ids;
        ASSERT_EQ(subset.size(), 120u);
        d.pipeline.shard_by = by;
        d.pipeline.shard_count = 2;
        std::vector<int64_t> together;
        for (int64_t shard = 0; shard < 2; ++shard) {
            d.pipeline.shard_index = shard;
            const Epoch e = epoch(d, 1);
            EXPECT_GT(e.ids.size(), 40u);
            EXPECT_EQ(e.trainExamples, 120) << "the run's training set is the whole subset";
            together.insert(together.end(), e.ids.begin(), e.ids.end());
        }
        std::sort(together.begin(), together.end());
        EXPECT_EQ(together, subset) << "the shards must cover the subset once";
    }
}

TEST_F(DataSubsetSourceTest, TooSmallAFractionIsAnErrorWithTheNumbers) {
    DataConfig d = idx();
    d.fraction = 0.1;  // 24 examples
    d.drop_remainder = true;
    EXPECT_EQ(errorOf([&] { openTrainingData(d, 32, 1); }),
              "data.fraction 0.1 keeps 24 of 240 training examples, fewer than one global batch of 32: with "
              "data.drop_remainder no step would run (raise data.fraction to at least 0.1334, or lower train.batch_size)");
    d.drop_remainder = false;  // one smaller batch per epoch is fine
    EXPECT_EQ(epoch(d, 1, 32).ids.size(), 24u);
    d.fraction = 0.001;
    EXPECT_EQ(errorOf([&] { openTrainingData(d, 32, 1); }),
              "data.fraction 0.001 keeps 0 of 240 training examples: raise data.fraction to at least 0.0042");
    DataConfig t = tfrecord();
    t.fraction = 0.1;
    t.drop_remainder = true;
    EXPECT_NE(errorOf([&] { openTrainingData(t, 32, 1); }).find("keeps 24 of 240 training examples, fewer than one global batch of 32"),
              std::string::npos);
}

TEST_F(DataSubsetSourceTest, TheTrainingLimitComesFirst) {
    DataConfig d = idx();
    d.train_limit = 100;
    d.fraction = 0.5;
    const Epoch e = epoch(d, 1);
    EXPECT_EQ(e.ids.size(), 50u);
    EXPECT_LT(e.ids.back(), 100);
}

}  // namespace
}  // namespace trainbench::engine
