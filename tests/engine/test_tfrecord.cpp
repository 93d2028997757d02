// TFRecord files: round trips (plain and zlib), the exact framing, every kind of corruption with its
// message, skip_corrupt, absurd lengths, damaged zlib streams, write errors, and reads through
// Storage in large requests.
#include "engine/data/records/tfrecord.h"

#include <sys/resource.h>

#include <stdexcept>

#include "engine/data/storage/storage.h"
#include "recordtestutil.h"

namespace trainbench::engine {
namespace {

using namespace recordtest;

// Records of assorted sizes: empty, tiny, a Fashion-MNIST-like 850 bytes, and beyond the reader's
// 1 MiB window so the streamed path is used too.
std::vector<std::string> sampleRecords() {
    std::vector<std::string> r = {"", "a", std::string(850, 'x'), "hello world"};
    std::string big(3u << 20, '\0');
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131) >> 3);
    r.push_back(big);
    r.push_back(std::string(1000, 'z'));
    r.push_back(std::string((1u << 20) - 16, 'w'));  // fills the 1 MiB window exactly, with its frame
    r.push_back(std::string((1u << 20) - 15, 'v'));  // one byte too many: streamed
    return r;
}

Bytes plainFile(const std::vector<std::string>& records) {
    Bytes out;
    for (const std::string& r : records) {
        const Bytes f = frame(r);
        out.insert(out.end(), f.begin(), f.end());
    }
    return out;
}

struct ReadResult {
    std::vector<std::string> records;
    std::vector<uint64_t> offsets;
    int64_t skipped = 0;
};

ReadResult readAll(const std::string& path, Compression c, bool skip = false) {
    Storage storage;
    TFRecordReader reader(storage.open(path), c, skip);
    ReadResult r;
    std::string rec;
    uint64_t off = 0;
    while (reader.next(rec, &off)) {
        r.records.push_back(rec);
        r.offsets.push_back(off);
    }
    EXPECT_FALSE(reader.next(rec));  // stays at the end
    r.skipped = reader.skipped();
    return r;
}

std::string corrupted(const std::string& path, uint64_t offset, const std::string& kind) {
    return path + ": corrupted record at byte offset " + std::to_string(offset) + ": " + kind;
}

using TFRecord = TempDirTest;

TEST_F(TFRecord, RoundTripPlainAndZlib) {
    const std::vector<std::string> records = sampleRecords();
    const Bytes expected = plainFile(records);
    for (Compression c : {Compression::kNone, Compression::kZlib}) {
        const std::string p = path(std::string("r.") + compressionName(c));
        TFRecordWriter w(p, c);
        for (const std::string& r : records) w.write(r);
        EXPECT_EQ(w.records(), static_cast<int64_t>(records.size()));
        w.close();
        const Bytes file = readFile(p);
        EXPECT_EQ(w.bytesWritten(), file.size());
        if (c == Compression::kNone) {
            EXPECT_EQ(file, expected);  // exactly TensorFlow's framing, CRCs computed independently
        } else {
            ASSERT_GE(file.size(), 2u);
            EXPECT_EQ(file[0], 0x78);  // one zlib stream (TensorFlow's "ZLIB"), not gzip or raw deflate
            EXPECT_LT(file.size(), expected.size() / 4);
            EXPECT_EQ(zlibInflate(file, expected.size()), expected);
        }
        const ReadResult got = readAll(p, c);
        EXPECT_EQ(got.records, records);
        uint64_t at = 0;
        for (size_t i = 0; i < records.size(); ++i) {
            EXPECT_EQ(got.offsets[i], at) << i;
            at += records[i].size() + 16;
        }
    }
}

TEST_F(TFRecord, WithoutCloseNothingIsWrittenAndEmptyFilesWork) {
    test::writeText(dir_ / "d", "an older shard");
    {
        TFRecordWriter w(path("d"), Compression::kZlib);
        w.write("abc");
        // Unwound (an error elsewhere) before close(): the shard is not put in place half done.
    }
    EXPECT_EQ(test::readText(dir_ / "d"), "an older shard");
    {
        TFRecordWriter w(path("e"));
        TFRecordWriter z(path("ez"), Compression::kZlib);
        w.close();
        z.close();
    }
    EXPECT_TRUE(readAll(path("e"), Compression::kNone).records.empty());
    EXPECT_TRUE(readAll(path("ez"), Compression::kZlib).records.empty());
}

TEST_F(TFRecord, ParsesCompressionNames) {
    EXPECT_EQ(parseCompression("none"), Compression::kNone);
    EXPECT_EQ(parseCompression("zlib"), Compression::kZlib);
    EXPECT_STREQ(compressionName(Compression::kZlib), "zlib");
    try {
        parseCompression("gzip");
        ADD_FAILURE() << "expected invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "unknown compression 'gzip' (known: none, zlib)");
    }
}

// Three records; the second (at byte 21 = 16 + 5) is damaged in each of the ways below.
struct Damage {
    const char* name;
    size_t byte;     // offset into the file to flip (or cut at, for truncations)
    bool truncate;
    std::string kind;
};

TEST_F(TFRecord, EveryCorruptionHasItsExactMessage) {
    const std::vector<std::string> records = {"first", "second record", "third"};
    const Bytes good = plainFile(records);
    const size_t second = 16 + 5;
    const size_t data = second + 12, footer = data + 13, third = footer + 4;
    const std::vector<Damage> damages = {
        {"length", second + 2, false, "length CRC mismatch"},
        {"length CRC", second + 9, false, "length CRC mismatch"},
        {"data", data + 4, false, "data CRC mismatch"},
        {"data CRC", footer + 1, false, "data CRC mismatch"},
        {"cut in header", second + 7, true, "truncated length header"},
        {"cut in data", data + 5, true, "truncated record (needs 29 bytes, 17 left)"},
        {"cut in footer", footer + 2, true, "truncated record (needs 29 bytes, 27 left)"},
    };
    for (const Damage& d : damages) {
        Bytes bad = good;
        if (d.truncate)
            bad.resize(d.byte);
        else
            bad[d.byte] ^= 0x20;
        ASSERT_LT(d.byte, third);
        writeFile(path("plain"), bad);
        writeFile(path("zlib"), zlibCompress(bad));
        for (Compression c : {Compression::kNone, Compression::kZlib}) {
            const std::string p = path(c == Compression::kNone ? "plain" : "zlib");
            SCOPED_TRACE(std::string(d.name) + ", " + compressionName(c));
            Storage storage;
            TFRecordReader reader(storage.open(p), c);
            std::string rec;
            ASSERT_TRUE(reader.next(rec));
            EXPECT_EQ(rec, "first");
            const std::string msg = errorOf([&] { reader.next(rec); });
            EXPECT_EQ(msg, corrupted(p, second, d.kind));
            EXPECT_EQ(errorOf([&] { reader.next(rec); }), msg);  // the reader stays failed
        }
    }
}

TEST_F(TFRecord, SkipCorruptCountsAndResynchronises) {
    std::vector<std::string> records;
    for (int i = 0; i < 6; ++i) records.push_back("record " + std::to_string(i));
    Bytes file = plainFile(records);
    const size_t each = 16 + records[0].size();
    file[2 * each + 12] ^= 1;   // data of record 2
    file[4 * each + 12 + records[0].size()] ^= 1;  // data CRC of record 4
    writeFile(path("dataflips"), file);
    writeFile(path("dataflips.z"), zlibCompress(file));
    for (const auto& [name, c] : {std::pair{"dataflips", Compression::kNone}, {"dataflips.z", Compression::kZlib}}) {
        const ReadResult r = readAll(path(name), c, true);
        EXPECT_EQ(r.records, (std::vector<std::string>{"record 0", "record 1", "record 3", "record 5"})) << name;
        EXPECT_EQ(r.offsets, (std::vector<uint64_t>{0, each, 3 * each, 5 * each})) << name;
        EXPECT_EQ(r.skipped, 2) << name;
    }

    // A bad length cannot be stepped over: the rest of the file goes, counted once.
    file = plainFile(records);
    file[3 * each] ^= 1;
    writeFile(path("lengthflip"), file);
    const ReadResult r = readAll(path("lengthflip"), Compression::kNone, true);
    EXPECT_EQ(r.records.size(), 3u);
    EXPECT_EQ(r.skipped, 1);

    // A cut-off last record.
    file = plainFile(records);
    file.resize(file.size() - 3);
    writeFile(path("cut"), file);
    const ReadResult cut = readAll(path("cut"), Compression::kNone, true);
    EXPECT_EQ(cut.records.size(), 5u);
    EXPECT_EQ(cut.skipped, 1);
}

TEST_F(TFRecord, LargeRecordDataCrcMismatchIsFoundAndSkipped) {
    std::string big(2u << 20, 'q');
    Bytes file = plainFile({big, "after"});
    file[12 + (1u << 20) + 7] ^= 4;
    writeFile(path("big"), file);
    writeFile(path("big.z"), zlibCompress(file));
    for (const auto& [name, c] : {std::pair{"big", Compression::kNone}, {"big.z", Compression::kZlib}}) {
        EXPECT_EQ(errorOf([&] { readAll(path(name), c); }), corrupted(path(name), 0, "data CRC mismatch"));
        const ReadResult r = readAll(path(name), c, true);
        EXPECT_EQ(r.records, std::vector<std::string>{"after"});
        EXPECT_EQ(r.skipped, 1);
    }
}

long maxRssKiB() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

// A length with a valid CRC but far more than the file holds must fail before anything is
// allocated for it: 2^62 bytes could not be allocated at all, and 1 GiB would be, for nothing.
TEST_F(TFRecord, AbsurdLengthsFailWithoutAllocating) {
    Bytes huge = plainFile({"ok"});
    const Bytes h62 = headerOnly(uint64_t{1} << 62);
    huge.insert(huge.end(), h62.begin(), h62.end());
    huge.resize(huge.size() + 100, 0);
    writeFile(path("h62"), huge);
    writeFile(path("h62.z"), zlibCompress(huge));

    Bytes gib = plainFile({"ok"});
    const Bytes h30 = headerOnly(uint64_t{1} << 30);
    gib.insert(gib.end(), h30.begin(), h30.end());
    gib.resize(gib.size() + 100, 7);
    writeFile(path("g30"), gib);
    writeFile(path("g30.z"), zlibCompress(gib));

    const long before = maxRssKiB();
    for (Compression c : {Compression::kNone, Compression::kZlib}) {
        const std::string z = c == Compression::kZlib ? ".z" : "";
        EXPECT_EQ(errorOf([&] { readAll(path("h62" + z), c); }),
                  corrupted(path("h62" + z), 18,
                            "record length 4611686018427387904 exceeds the limit of 1073741824 bytes"));
        EXPECT_EQ(errorOf([&] { readAll(path("g30" + z), c); }),
                  corrupted(path("g30" + z), 18, "truncated record (needs 1073741840 bytes, 112 left)"));
        const ReadResult skipped = readAll(path("h62" + z), c, true);
        EXPECT_EQ(skipped.records, std::vector<std::string>{"ok"});
        EXPECT_EQ(skipped.skipped, 1);
    }
    EXPECT_LT(maxRssKiB() - before, 128 * 1024) << "a reader allocated for a length the file cannot hold";
}

TEST_F(TFRecord, DamagedZlibStreams) {
    std::vector<std::string> records;
    for (int i = 0; i < 2000; ++i) {
        std::string r(300, '\0');
        uint32_t s = static_cast<uint32_t>(i) * 2654435761u;
        for (auto& ch : r) {
            s = s * 1664525u + 1013904223u;
            ch = static_cast<char>(s >> 24);  // incompressible, so a cut lands mid-stream
        }
        records.push_back(r);
    }
    const Bytes plain = plainFile(records);
    const Bytes z = zlibCompress(plain);

    // Cut in half: the records before the cut are read, then the stream's end is the error.
    writeFile(path("half"), Bytes(z.begin(), z.begin() + static_cast<std::ptrdiff_t>(z.size() / 2)));
    {
        Storage storage;
        TFRecordReader reader(storage.open(path("half")), Compression::kZlib);
        std::string rec;
        size_t n = 0;
        const std::string msg = errorOf([&] {
            while (reader.next(rec)) ASSERT_EQ(rec, records[n++]);
        });
        EXPECT_GT(n, 500u);
        EXPECT_NE(msg.find(path("half") + ": truncated zlib stream: compressed data ends after "), std::string::npos)
            << msg;
        EXPECT_NE(msg.find("(file is " + std::to_string(z.size() / 2) + " bytes); the file was cut short"),
                  std::string::npos)
            << msg;
    }
    const ReadResult half = readAll(path("half"), Compression::kZlib, true);
    EXPECT_GT(half.records.size(), 500u);
    EXPECT_EQ(half.skipped, 1);

    // Only the 4-byte Adler-32 trailer missing: every record is there, the stream is still not whole.
    writeFile(path("trailer"), Bytes(z.begin(), z.end() - 4));
    EXPECT_NE(errorOf([&] { readAll(path("trailer"), Compression::kZlib); })
                  .find("truncated zlib stream: compressed data ends after " + std::to_string(plain.size()) +
                        " uncompressed bytes"),
              std::string::npos);

    Bytes flipped = z;
    flipped[z.size() / 3] ^= 0xff;
    writeFile(path("flipped"), flipped);
    const std::string flipMsg = errorOf([&] { readAll(path("flipped"), Compression::kZlib); });
    EXPECT_TRUE(flipMsg.find(path("flipped") + ": corrupt zlib stream after ") != std::string::npos ||
                flipMsg.find(": corrupted record at byte offset ") != std::string::npos)
        << flipMsg;

    Bytes trailing = zlibCompress(plainFile({"a", "b"}));
    trailing.push_back(0);
    writeFile(path("trailing"), trailing);
    EXPECT_EQ(errorOf([&] { readAll(path("trailing"), Compression::kZlib); }),
              path("trailing") + ": unexpected data after the end of the zlib stream at compressed byte offset " +
                  std::to_string(trailing.size() - 1));

    writeFile(path("notzlib"), plain);
    EXPECT_NE(errorOf([&] { readAll(path("notzlib"), Compression::kZlib); }).find("corrupt zlib stream after 0"),
              std::string::npos);
    writeFile(path("empty"), {});
    EXPECT_EQ(errorOf([&] { readAll(path("empty"), Compression::kZlib); }),
              path("empty") + ": truncated zlib stream: compressed data ends after 0 uncompressed bytes (file is 0 "
                              "bytes); the file was cut short");
}

TEST_F(TFRecord, ReadsThroughStorageInLargeRequests) {
    std::vector<std::string> records(10000, std::string(850, 'p'));
    for (size_t i = 0; i < records.size(); ++i) records[i][i % 850] = static_cast<char>(i);
    for (Compression c : {Compression::kNone, Compression::kZlib}) {
        const std::string p = path("many");
        {
            TFRecordWriter w(p, c);
            for (const std::string& r : records) w.write(r);
            w.close();
        }
        Storage storage;
        TFRecordReader reader(storage.open(p), c);
        std::string rec;
        size_t n = 0;
        while (reader.next(rec)) ASSERT_EQ(rec, records[n++]);
        EXPECT_EQ(n, records.size());
        const StorageStats s = storage.stats();
        const int64_t fileBytes = static_cast<int64_t>(fs::file_size(p));
        EXPECT_EQ(s.opens, 1);
        EXPECT_EQ(s.bytes, fileBytes) << compressionName(c);
        // 8.66 MB plain: 9 requests of 1 MiB; never one per record.
        EXPECT_LE(s.requests, fileBytes / (1 << 20) + 2) << compressionName(c);
    }
}

TEST_F(TFRecord, WriteErrorsNameTheFile) {
    // /dev/full accepts the open and fails every write with ENOSPC.
    {
        TFRecordWriter w("/dev/full");
        w.write("small record");
        const std::string msg = errorOf([&] { w.close(); });
        EXPECT_EQ(msg.rfind("/dev/full: TFRecord file not saved: cannot write", 0), 0u) << msg;
        EXPECT_NE(msg.find("No space left on device (disk full)"), std::string::npos) << msg;
        EXPECT_EQ(errorOf([&] { w.close(); }), msg);  // a second close does not pretend all is well
    }
    {
        TFRecordWriter w("/dev/full", Compression::kZlib);
        std::string big(3u << 20, 'b');
        uint32_t seed = 1;
        for (char& ch : big) {
            seed = seed * 1664525u + 1013904223u;
            ch = static_cast<char>(seed >> 24);  // incompressible: deflate output fills and is written
        }
        const std::string msg = errorOf([&] {
            for (int i = 0; i < 4; ++i) w.write(big);
            w.close();
        });
        EXPECT_NE(msg.find("/dev/full: TFRecord file not saved: cannot write"), std::string::npos) << msg;
        EXPECT_EQ(errorOf([&] { w.write("more"); }), msg);  // failed in write(): later writes repeat it
    }
    const std::string missing = path("no/such/dir/x.tfrecord");
    EXPECT_EQ(errorOf([&] { TFRecordWriter w(missing); }),
              missing + ": TFRecord file not saved: cannot open the folder " + path("no/such/dir") +
                  ": No such file or directory");
    TFRecordWriter w(path("closed"));
    w.close();
    EXPECT_THROW(w.write("late"), std::logic_error);
}

}  // namespace
}  // namespace trainbench::engine
