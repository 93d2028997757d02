// Converters and sources round trip: CSV files, image folders and TFRecord shards go through
// convertData and come back through the streaming pipeline (and openTrainingData) unchanged.
#include "engine/data/convert/converter.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "engine/data/pipeline/datasource.h"
#include "engine/data/pipeline/streamingpipeline.h"
#include "engine/data/records/tfrecord.h"
#include "engine/data/sources/imagefolder.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;
using test::writeText;

class ConvertTest : public test::TempDirTest {
protected:
    // Every example of a split, in file order (no shuffle), as (features, label).
    static std::vector<std::pair<std::vector<float>, int32_t>> readSplit(const DataConfig& d, bool train) {
        auto storage = std::make_shared<Storage>();
        const EvalSet e = StreamingPipeline::readAll(d, listSourceFiles(d, train, *storage), storage);
        std::vector<std::pair<std::vector<float>, int32_t>> out;
        for (int64_t i = 0; i < e.count; ++i) {
            const float* x = e.x.data() + i * e.exampleSize();
            out.emplace_back(std::vector<float>(x, x + e.exampleSize()), e.labels[static_cast<size_t>(i)]);
        }
        return out;
    }
    static auto sorted(std::vector<std::pair<std::vector<float>, int32_t>> v) {
        std::sort(v.begin(), v.end());
        return v;
    }
};

TEST_F(ConvertTest, CsvToShardsAndToFilesKeepsEveryRow) {
    writeText(dir_ / "train.csv", "a,b,c,label\n0.5,1,2,1\n3,4.25,5,0\n-6,7,8,2\n9,10,11,1\n12,13,14,0\n");
    DataConfig csv;
    csv.dataset = "csv";
    csv.train_files = (dir_ / "train.csv").string();
    csv.csv.label_column = "label";
    const auto rows = readSplit(csv, true);
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(rows[0].first, (std::vector<float>{0.5f, 1, 2}));
    EXPECT_EQ(rows[2].second, 2);

    ConvertOptions o;
    o.source = csv;
    o.output_dir = (dir_ / "out").string();
    o.shards = 2;
    const ConvertResult r = convertData(o);
    EXPECT_EQ(r.examples, 5);
    ASSERT_EQ(r.files.size(), 2u);
    EXPECT_EQ(fs::path(r.files[0]).filename(), "train-00000-of-00002.tfrecord");
    DataConfig shards;
    shards.dataset = "tfrecord";
    shards.train_files = (dir_ / "out/train-*.tfrecord").string();
    EXPECT_EQ(sorted(readSplit(shards, true)), sorted(rows)) << "float features survive exactly";

    o.to = "files";
    o.output_dir = (dir_ / "files").string();
    EXPECT_EQ(convertData(o).examples, 5);
    DataConfig files;
    files.dataset = "example_files";
    files.train_files = (dir_ / "files/train-files").string();
    EXPECT_EQ(readSplit(files, true), rows) << "one file per example, in order";
}

TEST_F(ConvertTest, ImageFolderToShardsKeepsPixelsLabelsAndShape) {
    // Two classes of 3x2 grey PNGs; pixel k of image i is 10 * i + k.
    std::vector<std::vector<uint8_t>> images;
    for (int i = 0; i < 6; ++i) {
        std::vector<uint8_t> px(6);
        for (int k = 0; k < 6; ++k) px[static_cast<size_t>(k)] = static_cast<uint8_t>(10 * i + k);
        const fs::path cls = dir_ / "images" / (i % 2 ? "shirt" : "boot");
        fs::create_directories(cls);
        writeText(cls / ("img" + std::to_string(i) + ".png"), encodePng(px.data(), 1, 2, 3));
        images.push_back(px);
    }
    DataConfig img;
    img.dataset = "images";
    img.train_files = (dir_ / "images").string();
    const auto direct = readSplit(img, true);
    ASSERT_EQ(direct.size(), 6u);
    // boot (label 0) first: img0, img2, img4; then shirt: img1, img3, img5.
    EXPECT_EQ(direct[0].second, 0);
    EXPECT_EQ(direct[3].second, 1);
    EXPECT_FLOAT_EQ(direct[1].first[5], 25.0f / 255.0f);

    ConvertOptions o;
    o.source = img;
    o.output_dir = (dir_ / "out").string();
    o.shards = 3;
    o.compression = "zlib";
    EXPECT_EQ(convertData(o).examples, 6);
    DataConfig shards;
    shards.dataset = "tfrecord";
    shards.train_files = (dir_ / "out/train-*.tfrecord").string();
    shards.pipeline.compression = "zlib";
    EXPECT_EQ(sorted(readSplit(shards, true)), sorted(direct));
    // The shape written by convert is the one the pipeline reports.
    auto storage = std::make_shared<Storage>();
    StreamingPipeline p(shards, listSourceFiles(shards, true, *storage), 2, false, false, 1, {}, storage);
    EXPECT_EQ(p.channels(), 1);
    EXPECT_EQ(p.height(), 2);
    EXPECT_EQ(p.width(), 3);
}

TEST_F(ConvertTest, ReshardingCopiesRecordsAsTheyAreAndBalancesShards) {
    DataConfig idx;  // Debian's Fashion-MNIST
    ConvertOptions o;
    o.source = idx;
    o.output_dir = (dir_ / "a").string();
    o.shards = 3;
    o.limit = 300;
    convertData(o);
    DataConfig three;
    three.dataset = "tfrecord";
    three.train_files = (dir_ / "a/train-*.tfrecord").string();
    // Equal-sized examples go round robin: 100 per shard, identical sizes.
    EXPECT_EQ(fs::file_size(dir_ / "a/train-00000-of-00003.tfrecord"), fs::file_size(dir_ / "a/train-00002-of-00003.tfrecord"));

    ConvertOptions re;
    re.source = three;
    re.output_dir = (dir_ / "b").string();
    re.shards = 2;
    EXPECT_EQ(convertData(re).examples, 300);
    DataConfig two = three;
    two.train_files = (dir_ / "b/train-*.tfrecord").string();
    EXPECT_EQ(sorted(readSplit(two, true)), sorted(readSplit(three, true)));
    // Byte for byte: the 300 records of the 2 new shards are the 300 records of the 3 old ones.
    auto records = [](const std::string& pattern) {
        Storage s;
        std::multiset<std::string> out;
        for (const auto& f : s.list(pattern)) {
            TFRecordReader r(s.open(f));
            for (std::string rec; r.next(rec);) out.insert(rec);
        }
        return out;
    };
    EXPECT_EQ(records(two.train_files), records(three.train_files));
}

TEST_F(ConvertTest, OpenTrainingDataFromShardsMatchesTheIdxSource) {
    ConvertOptions o;
    o.output_dir = (dir_ / "shards").string();
    o.shards = 4;
    o.limit = 500;
    o.train = true;
    convertData(o);
    o.train = false;
    convertData(o);
    DataConfig d;
    d.dataset = "tfrecord";
    d.train_files = (dir_ / "shards/train-*.tfrecord").string();
    d.test_files = (dir_ / "shards/test-*.tfrecord").string();
    const TrainingData td = openTrainingData(d, 50, 1);
    EXPECT_EQ(td.channels, 1);
    EXPECT_EQ(td.height, 28);
    EXPECT_EQ(td.width, 28);
    EXPECT_EQ(td.num_classes, 10);
    EXPECT_EQ(td.test.count, 500);

    DataConfig idx;
    idx.test_limit = 500;
    const TrainingData ref = openTrainingData(idx, 50, 1);
    // Shard k holds examples k, k+4, ...; reading the 4 shards round robin (interleave) restores the
    // original order, so the test split equals the IDX one bit for bit.
    EXPECT_EQ(td.test.x, ref.test.x);
    EXPECT_EQ(td.test.labels, ref.test.labels);
}

TEST_F(ConvertTest, WriteFailuresNameTheFile) {
    ConvertOptions o;
    o.output_dir = "/proc/trainbench-cannot-create";
    o.limit = 10;
    const std::string message = test::errorOf([&] { convertData(o); });
    EXPECT_NE(message.find("/proc/trainbench-cannot-create"), std::string::npos) << message;
}

// A conversion killed midway (SIGKILL, no unwinding) leaves no short shard under a shard's name: the
// shards of the conversion before it stay as they were, byte for byte, and nothing else appears.
TEST_F(ConvertTest, AKilledConversionLeavesNoShortShard) {
    std::string csv = "a,b,label\n";
    for (int i = 0; i < 20000; ++i) csv += std::to_string(i) + ",0.5," + std::to_string(i % 3) + "\n";
    writeText(dir_ / "train.csv", csv);
    ConvertOptions o;
    o.source.dataset = "csv";
    o.source.train_files = (dir_ / "train.csv").string();
    o.source.csv.label_column = "label";
    o.output_dir = (dir_ / "out").string();
    o.shards = 3;
    o.limit = 300;
    const ConvertResult before = convertData(o);
    std::vector<std::string> old;
    for (const std::string& f : before.files) old.push_back(test::readText(f));

    // The child converts everything and stops, killed, after 5000 examples are in the shards.
    o.limit = 0;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        try {
            convertData(o, [&](int64_t done, int64_t) {
                if (done < 5000) return;
                char c = 'k';
                if (::write(fds[1], &c, 1) != 1) ::_exit(3);
                for (;;) ::pause();
            });
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    char c = 0;
    const ssize_t n = ::read(fds[0], &c, 1);  // a crash of the child ends the wait too (EOF)
    ::close(fds[0]);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_EQ(n, 1) << "the child did not get to 5000 examples (status " << status << ")";

    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"train-00000-of-00003.tfrecord", "train-00001-of-00003.tfrecord",
                                               "train-00002-of-00003.tfrecord"}));
    for (size_t i = 0; i < before.files.size(); ++i) {
        const std::string now = test::readText(before.files[i]);
        EXPECT_TRUE(now == old[i]) << before.files[i] << " is not the earlier conversion's: " << now.size()
                                   << " bytes now, " << old[i].size() << " before";
    }
}

}  // namespace
}  // namespace trainbench::engine
