// Damaged checkpoint files: every kind of damage (flipped bytes, cuts, bad magic, a newer version,
// inconsistent tables, absurd lengths) is caught and named with the file, the byte offset, the part
// and, for shards, the shard's name.
#include <cstdio>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "recordtestutil.h"

namespace trainbench::engine {
namespace {

using namespace recordtest;

std::string hex32(uint32_t v) {
    char buf[11];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

void put32(Bytes& f, size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) f[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(Bytes& f, size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) f[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// Where things are, by the documented layout (not by asking the writer): a 40-byte header, the
// table (16 bytes + name per shard) and its 4-byte CRC, the metadata, then the shards back to back.
struct Layout {
    static constexpr uint64_t kTable = 40;
    uint64_t tableBytes = 0, metadata = 0, end = 0;
    std::vector<uint64_t> entry, data;

    Layout(const std::vector<std::pair<std::string, size_t>>& shards, size_t metadataBytes) {
        for (const auto& [name, bytes] : shards) {
            entry.push_back(kTable + tableBytes);
            tableBytes += 16 + name.size();
        }
        metadata = kTable + tableBytes + 4;
        end = metadata + metadataBytes;
        for (const auto& [name, bytes] : shards) {
            data.push_back(end);
            end += bytes;
        }
    }
};

// After a test edits fields under a CRC, so that the edit itself is what the reader meets.
void resealHeader(Bytes& f) { put32(f, 36, crcBitwise(f.data(), 36)); }
void resealTable(Bytes& f, uint64_t tableBytes) { put32(f, 40 + tableBytes, crcBitwise(f.data() + 40, tableBytes)); }

// A checkpoint of three shards (one empty) and metadata, and its layout, to damage.
class CheckpointDamage : public TempDirTest {
protected:
    void SetUp() override {
        TempDirTest::SetUp();
        CheckpointWriter w;
        std::vector<float> values(64);
        for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 3.0f;
        w.addFloats("w", values);
        w.add("empty", nullptr, 0);
        Bytes b(100);
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(255 - i);
        w.add("b", b.data(), b.size());
        w.setMetadata(metadata);
        w.commit(path("good.ckpt"));
        good = readFile(path("good.ckpt"));
        ASSERT_EQ(good.size(), layout.end);
    }

    // The error reading `file` gives.
    std::string errorReading(const Bytes& file) {
        writeFile(damaged(), file);
        return errorOf([&] { Checkpoint::read(damaged()); });
    }
    std::string damaged() const { return path("damaged.ckpt"); }
    std::string corrupt(uint64_t offset, const std::string& kind) const {
        return damaged() + ": corrupt checkpoint at byte offset " + std::to_string(offset) + ": " + kind;
    }

    const std::string metadata = R"({"step":7})";
    const Layout layout{{{"w", 256}, {"empty", 0}, {"b", 100}}, metadata.size()};
    Bytes good;
};

TEST_F(CheckpointDamage, FlippedByteInAShardNamesThatShard) {
    struct Target {
        std::string name;
        uint64_t start, size;
    };
    for (const Target& t : {Target{"w", layout.data[0], 256}, Target{"b", layout.data[2], 100}}) {
        const auto& [name, start, size] = t;
        for (uint64_t at : {start, start + size / 2, start + size - 1}) {
            Bytes f = good;
            f[at] ^= 0x10;
            const uint32_t stored = crcBitwise(good.data() + start, size);
            const uint32_t actual = crcBitwise(f.data() + start, size);
            EXPECT_EQ(errorReading(f), corrupt(start, "shard '" + name + "': data CRC mismatch (expected " +
                                                          hex32(stored) + ", actual " + hex32(actual) + ")"))
                << "flipped byte " << at;
        }
    }
}

TEST_F(CheckpointDamage, FlippedByteInHeaderTableOrMetadataIsNamed) {
    Bytes f = good;
    f[12] ^= 1;  // the shard count
    EXPECT_NE(errorReading(f).find(corrupt(0, "header CRC mismatch (expected ")), std::string::npos);
    f = good;
    f[layout.entry[1] + 4] ^= 1;  // a letter of "empty"
    EXPECT_NE(errorReading(f).find(corrupt(40, "shard table CRC mismatch (expected ")), std::string::npos);
    f = good;
    f[layout.metadata + 3] ^= 1;
    const uint32_t actual = crcBitwise(f.data() + layout.metadata, metadata.size());
    EXPECT_EQ(errorReading(f),
              corrupt(layout.metadata, "metadata CRC mismatch (expected " +
                                           hex32(crcBitwise(good.data() + layout.metadata, metadata.size())) +
                                           ", actual " + hex32(actual) + ")"));
}

TEST_F(CheckpointDamage, EveryTruncationIsCaughtAndNamed) {
    // Every cut is an error; at each part's boundaries, the part is named.
    for (uint64_t cut = 0; cut < good.size(); ++cut) {
        const std::string msg = errorReading(Bytes(good.begin(), good.begin() + static_cast<ptrdiff_t>(cut)));
        EXPECT_NE(msg.find(damaged() + ": corrupt checkpoint at byte offset "), std::string::npos) << cut << ": " << msg;
        EXPECT_NE(msg.find("truncated"), std::string::npos) << cut << ": " << msg;
    }
    auto cutAt = [&](uint64_t n) { return errorReading(Bytes(good.begin(), good.begin() + static_cast<ptrdiff_t>(n))); };
    EXPECT_EQ(cutAt(0), corrupt(0, "truncated header (needs 40 bytes, the file has 0)"));
    EXPECT_EQ(cutAt(39), corrupt(0, "truncated header (needs 40 bytes, the file has 39)"));
    EXPECT_EQ(cutAt(40), corrupt(40, "truncated shard table (needs 55 bytes and a 4-byte CRC, the file has 0 from here)"));
    EXPECT_EQ(cutAt(layout.metadata - 1),
              corrupt(40, "truncated shard table (needs 55 bytes and a 4-byte CRC, the file has 58 from here)"));
    EXPECT_EQ(cutAt(layout.metadata + 4),
              corrupt(layout.metadata, "truncated metadata (needs 10 bytes, the file has 4 from here)"));
    EXPECT_EQ(cutAt(layout.data[0] + 100),
              corrupt(layout.data[0], "shard 'w' is truncated: its length 256 runs past the end of the file (100 bytes left)"));
    EXPECT_EQ(cutAt(layout.end - 1),
              corrupt(layout.data[2], "shard 'b' is truncated: its length 100 runs past the end of the file (99 bytes left)"));
}

TEST_F(CheckpointDamage, BytesAfterTheLastShardAreReported) {
    Bytes f = good;
    f.insert(f.end(), {1, 2, 3});
    EXPECT_EQ(errorReading(f), corrupt(layout.end, "3 unexpected bytes after the last shard"));
}

TEST_F(CheckpointDamage, BadMagicSaysItIsNoCheckpoint) {
    Bytes f = good;
    f[7] = '\r';  // what a text-mode transfer does to the newline
    EXPECT_EQ(errorReading(f), damaged() + ": not a trainbench checkpoint: bad magic at byte offset 0 "
                                           "(found 89 54 42 43 4b 50 54 0d, expected 89 54 42 43 4b 50 54 0a)");
    EXPECT_EQ(errorReading(Bytes{'{', '}'}), damaged() + ": not a trainbench checkpoint: bad magic at byte offset 0 "
                                                          "(found 7b 7d, expected 89 54 42 43 4b 50 54 0a)");
}

TEST_F(CheckpointDamage, FutureVersionIsRefusedByNumber) {
    Bytes f = good;
    put32(f, 8, 2);
    EXPECT_EQ(errorReading(f), damaged() + ": unsupported checkpoint format version 2 at byte offset 8 "
                                           "(this build reads version 1)");
    f.resize(20);  // a newer header may be shaped differently: its version is still read first
    EXPECT_EQ(errorReading(f), damaged() + ": unsupported checkpoint format version 2 at byte offset 8 "
                                           "(this build reads version 1)");
}

// Tables that disagree with themselves or the header, their CRCs intact.
TEST_F(CheckpointDamage, InconsistentTableIsNamed) {
    Bytes f = good;
    f[layout.entry[2] + 4] = 'w';  // "b" becomes a second "w"
    resealTable(f, layout.tableBytes);
    EXPECT_EQ(errorReading(f), corrupt(layout.entry[2], "duplicate shard name 'w'"));
    f = good;
    put32(f, 12, 2);  // the header counts one shard fewer than the table holds
    resealHeader(f);
    EXPECT_EQ(errorReading(f), corrupt(layout.entry[2], "17 unused bytes at the end of the shard table"));
}

// Lengths with intact CRCs (a buggy writer, or damage the CRC happens to miss): each is refused by
// comparing it with what the file holds, before any buffer is sized by it. A buffer of these sizes
// could not be allocated: an attempt would throw std::bad_alloc (or abort under ASan), not the
// CheckpointError errorOf expects.
TEST_F(CheckpointDamage, HugeLengthsAreRefusedBeforeAllocating) {
    const uint64_t huge[] = {uint64_t{1} << 40, uint64_t{1} << 62, ~uint64_t{0}, ~uint64_t{0} - 3};
    for (uint64_t len : huge) {
        Bytes f = good;
        put64(f, 16, len);  // table bytes
        resealHeader(f);
        EXPECT_EQ(errorReading(f), corrupt(40, "truncated shard table (needs " + std::to_string(len) +
                                                   " bytes and a 4-byte CRC, the file has " +
                                                   std::to_string(good.size() - 40) + " from here)"));
        f = good;
        put64(f, 24, len);  // metadata bytes
        resealHeader(f);
        EXPECT_EQ(errorReading(f), corrupt(layout.metadata, "truncated metadata (needs " + std::to_string(len) +
                                                                " bytes, the file has " +
                                                                std::to_string(good.size() - layout.metadata) +
                                                                " from here)"));
        f = good;
        put64(f, layout.entry[0] + 4 + 1, len);  // shard "w"'s length
        resealTable(f, layout.tableBytes);
        EXPECT_EQ(errorReading(f), corrupt(layout.data[0], "shard 'w' is truncated: its length " + std::to_string(len) +
                                                               " runs past the end of the file (" +
                                                               std::to_string(good.size() - layout.data[0]) +
                                                               " bytes left)"));
    }
    Bytes f = good;
    put32(f, 12, 0xffffffffu);  // shard count: more entries than the table could hold
    resealHeader(f);
    EXPECT_EQ(errorReading(f), corrupt(12, "4294967295 shards cannot fit a shard table of 55 bytes"));
    f = good;
    put32(f, layout.entry[1], 0xffffffffu);  // name length of "empty"
    resealTable(f, layout.tableBytes);
    EXPECT_EQ(errorReading(f), corrupt(layout.entry[1], "shard table entry 1: name length 4294967295 (must be 1 to 4096)"));
    f = good;
    put32(f, layout.entry[2], 200);  // name length of "b": past the table's end
    resealTable(f, layout.tableBytes);
    EXPECT_EQ(errorReading(f), corrupt(layout.entry[2], "shard table entry 2 runs past the end of the table"));
}

}  // namespace
}  // namespace trainbench::engine
