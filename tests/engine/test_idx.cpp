// IDX reading (plain and gzip, every malformed-header case) and the image dataset loader.
// Fixtures are written into a fresh temp dir per test, so the cases stay readable next to the checks.
#include "engine/data/idxreader.h"
#include "engine/data/imagedataset.h"
#include "engine/util/errors.h"
#include "tests/engine/tempdirtest.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

Bytes idxBytes(uint8_t type, const std::vector<uint32_t>& dims, const Bytes& data) {
    Bytes b = {0, 0, type, static_cast<uint8_t>(dims.size())};
    for (uint32_t d : dims)
        for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

Bytes iota(size_t n) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
    return b;
}

// Poorly compressible bytes, so a cut in the compressed file lands mid-stream.
Bytes noise(size_t n) {
    Bytes b(n);
    uint32_t s = 12345;
    for (auto& v : b) { s = s * 1664525u + 1013904223u; v = static_cast<uint8_t>(s >> 24); }
    return b;
}

void writeFile(const fs::path& p, const Bytes& b) {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    ASSERT_TRUE(f.good()) << p;
}

void writeGz(const fs::path& p, const Bytes& b) {
    gzFile f = gzopen(p.c_str(), "wb");
    ASSERT_NE(f, nullptr) << p;
    ASSERT_EQ(gzwrite(f, b.data(), static_cast<unsigned>(b.size())), static_cast<int>(b.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
}

Bytes readFile(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

using test::errorOf;
using test::TempDirTest;

using IdxReader = TempDirTest;

TEST_F(IdxReader, ReadsPlainU8) {
    writeFile(path("a.idx"), idxBytes(kIdxU8, {3, 2, 2}, iota(12)));
    const IdxArray a = readIdx(path("a.idx"));
    EXPECT_EQ(a.dims, (std::vector<int64_t>{3, 2, 2}));
    EXPECT_EQ(a.type, kIdxU8);
    EXPECT_EQ(a.data, iota(12));
}

TEST_F(IdxReader, ReadsGzipDetectedByMagicNotName) {
    const Bytes content = idxBytes(kIdxU8, {4, 5}, iota(20));
    writeGz(path("no-extension"), content);   // gzip without .gz
    writeFile(path("plain.gz"), content);     // plain despite .gz
    for (const char* name : {"no-extension", "plain.gz"}) {
        const IdxArray a = readIdx(path(name));
        EXPECT_EQ(a.dims, (std::vector<int64_t>{4, 5})) << name;
        EXPECT_EQ(a.data, iota(20)) << name;
    }
}

TEST_F(IdxReader, AcceptsWiderTypesAndKeepsBytesAsStored) {
    writeFile(path("i16"), idxBytes(kIdxI16, {3}, {0x01, 0x02, 0x03, 0x04, 0xff, 0xfe}));
    const IdxArray a = readIdx(path("i16"));
    EXPECT_EQ(a.type, kIdxI16);
    EXPECT_EQ(a.data, (Bytes{0x01, 0x02, 0x03, 0x04, 0xff, 0xfe}));
    writeGz(path("f64.gz"), idxBytes(kIdxF64, {2, 1, 1, 1}, Bytes(16, 0x40)));
    EXPECT_EQ(readIdx(path("f64.gz")).data.size(), 16u);
    EXPECT_EQ(idxElementSize(kIdxI32), 4u);
    EXPECT_EQ(idxElementSize(0x0A), 0u);
}

TEST_F(IdxReader, BadMagicSaysWhatWasFound) {
    Bytes b = idxBytes(kIdxU8, {2}, {1, 2});
    b[0] = 0x50;
    b[1] = 0x4b;
    writeFile(path("zip"), b);
    const std::string msg = errorOf([&] { readIdx(path("zip")); });
    EXPECT_NE(msg.find(path("zip")), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte offset 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("found 50 4b"), std::string::npos) << msg;
}

TEST_F(IdxReader, UnknownTypeByte) {
    writeGz(path("t.gz"), idxBytes(0x07, {2}, {1, 2}));
    const std::string msg = errorOf([&] { readIdx(path("t.gz")); });
    EXPECT_NE(msg.find("t.gz"), std::string::npos) << msg;
    EXPECT_NE(msg.find("type 0x07"), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte offset 2"), std::string::npos) << msg;
}

TEST_F(IdxReader, ZeroOrTooManyDims) {
    writeFile(path("d0"), {0, 0, kIdxU8, 0, 1, 2});
    writeFile(path("d5"), idxBytes(kIdxU8, {1, 1, 1, 1, 1}, {9}));
    const std::string m0 = errorOf([&] { readIdx(path("d0")); });
    const std::string m5 = errorOf([&] { readIdx(path("d5")); });
    EXPECT_NE(m0.find("0 dimensions at byte offset 3"), std::string::npos) << m0;
    EXPECT_NE(m5.find("5 dimensions at byte offset 3"), std::string::npos) << m5;
}

TEST_F(IdxReader, HeaderCutShort) {
    writeFile(path("empty"), {});
    writeFile(path("dims"), {0, 0, kIdxU8, 3, 0, 0, 0, 5, 0});
    EXPECT_NE(errorOf([&] { readIdx(path("empty")); }).find("byte offset 0, inside the 4-byte IDX header"),
              std::string::npos);
    const std::string msg = errorOf([&] { readIdx(path("dims")); });
    EXPECT_NE(msg.find("byte offset 9, inside the IDX header (16 bytes"), std::string::npos) << msg;
}

TEST_F(IdxReader, SizeMismatchTooShortAndTooLong) {
    // Header 4 + 2*4 = 12 bytes; 3x4 u8 needs 12 data bytes.
    Bytes shortData = idxBytes(kIdxU8, {3, 4}, iota(9));
    Bytes longData = idxBytes(kIdxU8, {3, 4}, iota(15));
    writeFile(path("short"), shortData);
    writeFile(path("long"), longData);
    writeGz(path("short.gz"), shortData);
    writeGz(path("long.gz"), longData);
    for (const char* name : {"short", "short.gz"}) {
        const std::string msg = errorOf([&] { readIdx(path(name)); });
        EXPECT_NE(msg.find(path(name)), std::string::npos) << msg;
        EXPECT_NE(msg.find("3x4 u8"), std::string::npos) << msg;
        EXPECT_NE(msg.find("expected 12 data bytes from byte offset 12"), std::string::npos) << msg;
        EXPECT_NE(msg.find("holds 9 (3 too few)"), std::string::npos) << msg;
    }
    for (const char* name : {"long", "long.gz"}) {
        const std::string msg = errorOf([&] { readIdx(path(name)); });
        EXPECT_NE(msg.find("expected 12 data bytes"), std::string::npos) << msg;
        EXPECT_NE(msg.find("holds 15 (3 too many)"), std::string::npos) << msg;
    }
}

TEST_F(IdxReader, AbsurdHeaderFailsWithoutAllocating) {
    // 4 x 2^32-1 f64 elements overflow 64 bits; must be a size error, not bad_alloc.
    const uint32_t big = 0xffffffffu;
    writeFile(path("huge"), idxBytes(kIdxF64, {big, big, big, big}, iota(8)));
    writeGz(path("huge.gz"), idxBytes(kIdxU8, {big, big}, iota(8)));
    EXPECT_NE(errorOf([&] { readIdx(path("huge")); }).find("holds 8 ("), std::string::npos);
    EXPECT_NE(errorOf([&] { readIdx(path("huge.gz")); }).find("holds 8 ("), std::string::npos);
}

TEST_F(IdxReader, TruncatedGzip) {
    writeGz(path("full.gz"), idxBytes(kIdxU8, {100, 1000}, noise(100000)));
    const Bytes full = readFile(path("full.gz"));
    ASSERT_GT(full.size(), 1000u);
    // Cut mid-stream, and cut only the 8-byte CRC/length trailer (all data present, stream not whole).
    writeFile(path("half.gz"), Bytes(full.begin(), full.begin() + full.size() / 2));
    writeFile(path("trailer.gz"), Bytes(full.begin(), full.end() - 4));
    for (const char* name : {"half.gz", "trailer.gz"}) {
        const std::string msg = errorOf([&] { readIdx(path(name)); });
        EXPECT_NE(msg.find(path(name)), std::string::npos) << msg;
        EXPECT_NE(msg.find("truncated gzip stream"), std::string::npos) << msg;
    }
    const std::string trailerMsg = errorOf([&] { readIdx(path("trailer.gz")); });
    EXPECT_NE(trailerMsg.find("after 100012 decompressed bytes"), std::string::npos) << trailerMsg;
    EXPECT_EQ(readIdx(path("full.gz")).data.size(), 100000u);
}

TEST_F(IdxReader, CorruptGzipIsAnError) {
    writeGz(path("c.gz"), idxBytes(kIdxU8, {100, 1000}, noise(100000)));
    Bytes b = readFile(path("c.gz"));
    b[b.size() - 6] ^= 0xff;  // inside the CRC32: data inflates fine, the check fails
    writeFile(path("c.gz"), b);
    const std::string msg = errorOf([&] { readIdx(path("c.gz")); });
    EXPECT_NE(msg.find("corrupt gzip stream"), std::string::npos) << msg;
}

TEST_F(IdxReader, MissingFileAndDirectory) {
    const std::string missing = path("nope.idx");
    const std::string msg = errorOf([&] { readIdx(missing); });
    EXPECT_NE(msg.find(missing), std::string::npos) << msg;
    EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
    EXPECT_NE(errorOf([&] { readIdx(dir_.string()); }).find("is a directory"), std::string::npos);
}

// The in-memory overload (what the pipeline uses after reading through a Storage) gives the same
// arrays and the same messages as reading the file.
TEST_F(IdxReader, FromMemoryMatchesFromFile) {
    writeFile(path("plain"), idxBytes(kIdxU8, {3, 2, 2}, iota(12)));
    writeGz(path("gz"), idxBytes(kIdxI16, {2}, iota(4)));
    writeFile(path("short"), idxBytes(kIdxU8, {3, 4}, iota(9)));
    writeGz(path("full.gz"), idxBytes(kIdxU8, {100, 1000}, noise(100000)));
    const Bytes full = readFile(path("full.gz"));
    writeFile(path("cut.gz"), Bytes(full.begin(), full.begin() + 4000));
    writeFile(path("magic"), {0x50, 0x4b, 3, 4});
    for (const char* name : {"plain", "gz", "short", "full.gz", "cut.gz", "magic"}) {
        const std::string p = path(name);
        std::string fileError, memoryError;
        IdxArray fromFile, fromMemory;
        try {
            fromFile = readIdx(p);
        } catch (const DataError& e) {
            fileError = e.what();
        }
        try {
            fromMemory = readIdx(readFile(p), p);
        } catch (const DataError& e) {
            memoryError = e.what();
        }
        EXPECT_EQ(memoryError, fileError) << name;
        EXPECT_EQ(fromMemory.dims, fromFile.dims) << name;
        EXPECT_EQ(fromMemory.data, fromFile.data) << name;
    }
    EXPECT_EQ(readIdx(readFile(path("gz")), "x").dims, (std::vector<int64_t>{2}));
}

// Like gzread: concatenated gzip members are one stream; bytes after the last member are ignored.
TEST_F(IdxReader, GzipMembersAndTrailingBytes) {
    const Bytes content = idxBytes(kIdxU8, {2, 10}, iota(20));
    writeGz(path("a.gz"), Bytes(content.begin(), content.begin() + 15));
    writeGz(path("b.gz"), Bytes(content.begin() + 15, content.end()));
    Bytes both = readFile(path("a.gz"));
    const Bytes b = readFile(path("b.gz"));
    both.insert(both.end(), b.begin(), b.end());
    EXPECT_EQ(readIdx(both, "two members").data, iota(20));
    both.push_back(0x00);
    both.push_back(0x42);
    EXPECT_EQ(readIdx(both, "trailing").data, iota(20));
}

using ImageDatasetTest = TempDirTest;

// Five 2x3 images whose pixels encode their index, labels 0..2.
void writePair(const fs::path& dir, bool gz) {
    Bytes px(5 * 6);
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i);
    const Bytes images = idxBytes(kIdxU8, {5, 2, 3}, px);
    const Bytes labels = idxBytes(kIdxU8, {5}, {2, 0, 1, 1, 0});
    if (gz) {
        writeGz(dir / "imgs.gz", images);
        writeGz(dir / "lbls.gz", labels);
    } else {
        writeFile(dir / "imgs", images);
        writeFile(dir / "lbls", labels);
    }
}

DataConfig configFor(const fs::path& dir) {
    DataConfig cfg;
    cfg.path = dir.string();
    cfg.train_images = cfg.test_images = "imgs";
    cfg.train_labels = cfg.test_labels = "lbls";
    return cfg;
}

TEST_F(ImageDatasetTest, LoadsPairAndPrefersGz) {
    writePair(dir_, false);
    const ImageDataset plain = loadIdxDataset(configFor(dir_), true);
    EXPECT_EQ(plain.images_path, path("imgs"));
    writePair(dir_, true);
    const ImageDataset ds = loadIdxDataset(configFor(dir_), false);
    EXPECT_EQ(ds.images_path, path("imgs.gz"));
    EXPECT_EQ(ds.labels_path, path("lbls.gz"));
    EXPECT_EQ(ds.count, 5);
    EXPECT_EQ(ds.channels, 1);
    EXPECT_EQ(ds.height, 2);
    EXPECT_EQ(ds.width, 3);
    EXPECT_EQ(ds.num_classes, 3);
    EXPECT_EQ(ds.labels, (std::vector<int32_t>{2, 0, 1, 1, 0}));
    EXPECT_EQ(ds.pixels, plain.pixels);
    EXPECT_EQ(ds.pixels[29], 29);
    EXPECT_NE(describe(ds).find("5 examples, 1x2x3 u8, 3 classes"), std::string::npos) << describe(ds);
}

TEST_F(ImageDatasetTest, StemGivenWithExtensionOrAbsolute) {
    writePair(dir_, true);
    DataConfig cfg = configFor(dir_);
    cfg.path = "/nonexistent-folder-for-the-absolute-stem";
    cfg.train_images = path("imgs.gz");
    cfg.train_labels = path("lbls");  // absolute stem, ".gz" still tried first
    EXPECT_EQ(loadIdxDataset(cfg, true).count, 5);
    cfg = configFor(dir_);
    cfg.train_images = "imgs.gz";
    EXPECT_EQ(loadIdxDataset(cfg, true).images_path, path("imgs.gz"));
}

TEST_F(ImageDatasetTest, AppliesLimitButKeepsClassCount) {
    writePair(dir_, false);
    DataConfig cfg = configFor(dir_);
    cfg.train_limit = 2;   // labels 2, 0
    cfg.test_limit = 99;   // more than there is: all
    const ImageDataset tr = loadIdxDataset(cfg, true);
    EXPECT_EQ(tr.count, 2);
    EXPECT_EQ(tr.pixels.size(), 12u);
    EXPECT_EQ(tr.labels, (std::vector<int32_t>{2, 0}));
    EXPECT_EQ(tr.num_classes, 3);
    EXPECT_EQ(loadIdxDataset(cfg, false).count, 5);
}

TEST_F(ImageDatasetTest, CountMismatchNamesBothFiles) {
    writeFile(path("imgs"), idxBytes(kIdxU8, {4, 1, 1}, {1, 2, 3, 4}));
    writeFile(path("lbls"), idxBytes(kIdxU8, {3}, {0, 1, 2}));
    const std::string msg = errorOf([&] { loadIdxDataset(configFor(dir_), true); });
    EXPECT_NE(msg.find(path("imgs") + " holds 4 images"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path("lbls") + " holds 3 labels"), std::string::npos) << msg;
}

TEST_F(ImageDatasetTest, WrongShapesAndTypes) {
    writeFile(path("lbls"), idxBytes(kIdxU8, {2}, {0, 1}));
    writeFile(path("imgs"), idxBytes(kIdxU8, {2, 4}, iota(8)));
    std::string msg = errorOf([&] { loadIdxDataset(configFor(dir_), true); });
    EXPECT_NE(msg.find("expected u8 images of shape N x height x width, found u8 2x4"), std::string::npos) << msg;

    writeFile(path("imgs"), idxBytes(kIdxU8, {2, 1, 1}, {0, 1}));
    writeFile(path("lbls"), idxBytes(kIdxI16, {2}, {0, 0, 0, 1}));
    msg = errorOf([&] { loadIdxDataset(configFor(dir_), true); });
    EXPECT_NE(msg.find(path("lbls") + ": expected u8 labels of shape N, found i16 2"), std::string::npos)
        << msg;
}

TEST_F(ImageDatasetTest, NeedsTwoClasses) {
    writeFile(path("imgs"), idxBytes(kIdxU8, {3, 1, 1}, {0, 1, 2}));
    writeFile(path("lbls"), idxBytes(kIdxU8, {3}, {0, 0, 0}));
    const std::string msg = errorOf([&] { loadIdxDataset(configFor(dir_), true); });
    EXPECT_NE(msg.find("at least 2 classes"), std::string::npos) << msg;
}

TEST_F(ImageDatasetTest, MissingFileNamesBothTriedPaths) {
    const std::string msg = errorOf([&] { loadIdxDataset(configFor(dir_), true); });
    EXPECT_NE(msg.find("train images not found: tried " + path("imgs.gz") + " and " +
                       path("imgs")),
              std::string::npos)
        << msg;
}

// The real dataset from Debian's dataset-fashion-mnist package, when installed.
TEST(ImageDatasetFashionMnist, LoadsBalancedSplits) {
    const DataConfig cfg;
    if (!fs::exists(fs::path(cfg.path) / "train-images-idx3-ubyte.gz"))
        GTEST_SKIP() << "dataset-fashion-mnist not installed in " << cfg.path;
    for (const bool train : {true, false}) {
        const ImageDataset ds = loadIdxDataset(cfg, train);
        const int64_t n = train ? 60000 : 10000;
        EXPECT_EQ(ds.count, n);
        EXPECT_EQ(ds.height, 28);
        EXPECT_EQ(ds.width, 28);
        EXPECT_EQ(ds.num_classes, 10);
        EXPECT_EQ(static_cast<int64_t>(ds.pixels.size()), n * 784);
        std::array<int64_t, 10> hist{};
        for (int32_t l : ds.labels) ++hist[static_cast<size_t>(l)];
        for (int64_t h : hist) EXPECT_EQ(h, n / 10);
        EXPECT_EQ(ds.labels[0], 9);  // both splits start with an ankle boot
    }
    DataConfig limited;
    limited.test_limit = 100;
    EXPECT_EQ(loadIdxDataset(limited, false).count, 100);
}

}  // namespace
}  // namespace trainbench::engine
