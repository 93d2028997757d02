#include "engine/checkpoint/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "engine/checkpoint/checkpointformat.h"
#include "engine/data/records/crc32c.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using namespace checkpointformat;

static_assert(std::endian::native == std::endian::little, "checkpoints store float32 in the host's layout");

namespace {

std::string hex32(uint32_t v) {
    char buf[11];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

std::string crcMismatch(uint32_t stored, uint32_t computed) {
    return "CRC mismatch (expected " + hex32(stored) + ", actual " + hex32(computed) + ")";
}

// Reads one file, checking every length against the file's size before it is used, so that a
// damaged length field yields an error rather than a huge allocation.
class Reader {
public:
    explicit Reader(const std::string& path) : path_(path) {
        do {
            fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        } while (fd_ < 0 && errno == EINTR);
        if (fd_ < 0) {
            const int err = errno;
            throw CheckpointError(path + ": cannot open checkpoint: " + std::strerror(err));
        }
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd_);
            throw CheckpointError(path + ": not a checkpoint (not a regular file)");
        }
        size_ = static_cast<uint64_t>(st.st_size);
    }
    ~Reader() { ::close(fd_); }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    uint64_t size() const { return size_; }
    uint64_t left(uint64_t offset) const { return offset < size_ ? size_ - offset : 0; }

    [[noreturn]] void corrupt(uint64_t offset, const std::string& kind) const {
        throw CheckpointError(path_ + ": corrupt checkpoint at byte offset " + std::to_string(offset) + ": " + kind);
    }

    // n bytes at offset into dst; the caller has checked they lie within the file's size, so a short
    // read means the file shrank since (another process truncating it).
    void readAt(uint64_t offset, void* dst, size_t n, const char* what) const {
        auto* p = static_cast<uint8_t*>(dst);
        size_t done = 0;
        while (done < n) {
            const ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(offset + done));
            if (r < 0) {
                const int err = errno;
                if (err == EINTR) continue;
                throw CheckpointError(path_ + ": cannot read " + what + " at byte offset " +
                                      std::to_string(offset + done) + ": " + std::strerror(err));
            }
            if (r == 0)
                corrupt(offset + done, std::string("truncated ") + what + " (the file shrank while being read)");
            done += static_cast<size_t>(r);
        }
    }

private:
    std::string path_;
    int fd_ = -1;
    uint64_t size_ = 0;
};

std::string listNames(const std::vector<CheckpointShard>& shards) {
    if (shards.empty()) return "none";
    std::string s;
    for (const CheckpointShard& sh : shards) s += (s.empty() ? "'" : ", '") + sh.name + "'";
    return s;
}

}  // namespace

Checkpoint Checkpoint::read(const std::string& path) {
    Reader in(path);
    const uint64_t size = in.size();

    // Magic first (a wrong file is told as such, however short), then the version, whose place
    // every version keeps, then the rest of the header under its CRC.
    uint8_t h[kHeaderBytes] = {};
    const size_t got = static_cast<size_t>(std::min<uint64_t>(size, kHeaderBytes));
    in.readAt(0, h, got, "header");
    const size_t magicSeen = std::min(got, sizeof kMagic);
    if (std::memcmp(h, kMagic, magicSeen) != 0) {
        std::string found;
        for (size_t i = 0; i < magicSeen; ++i) {
            char b[4];
            std::snprintf(b, sizeof b, "%02x", h[i]);
            found += (i ? " " : "") + std::string(b);
        }
        throw CheckpointError(path + ": not a trainbench checkpoint: bad magic at byte offset 0 (found " + found +
                              ", expected 89 54 42 43 4b 50 54 0a)");
    }
    if (got >= kVersionOffset + 4 && load32(h + kVersionOffset) != kVersion)
        throw CheckpointError(path + ": unsupported checkpoint format version " +
                              std::to_string(load32(h + kVersionOffset)) + " at byte offset " +
                              std::to_string(kVersionOffset) + " (this build reads version " +
                              std::to_string(kVersion) + ")");
    if (got < kHeaderBytes)
        in.corrupt(0, "truncated header (needs " + std::to_string(kHeaderBytes) + " bytes, the file has " +
                          std::to_string(size) + ")");
    const uint32_t headerCrc = crc32c(h, kHeaderCrcOffset);
    if (headerCrc != load32(h + kHeaderCrcOffset))
        in.corrupt(0, "header " + crcMismatch(load32(h + kHeaderCrcOffset), headerCrc));

    const uint64_t count = load32(h + kCountOffset);
    const uint64_t tableBytes = load64(h + kTableBytesOffset);
    const uint64_t metadataBytes = load64(h + kMetadataBytesOffset);
    uint64_t pos = kHeaderBytes;
    if (tableBytes > in.left(pos) || in.left(pos) - tableBytes < kCrcBytes)
        in.corrupt(pos, "truncated shard table (needs " + std::to_string(tableBytes) + " bytes and a " +
                            std::to_string(kCrcBytes) + "-byte CRC, the file has " + std::to_string(in.left(pos)) +
                            " from here)");
    if (count > tableBytes / kEntryFixedBytes)
        in.corrupt(kCountOffset, std::to_string(count) + " shards cannot fit a shard table of " +
                                     std::to_string(tableBytes) + " bytes");

    std::vector<uint8_t> table(static_cast<size_t>(tableBytes + kCrcBytes));
    in.readAt(pos, table.data(), table.size(), "shard table");
    const uint32_t tableCrc = crc32c(table.data(), static_cast<size_t>(tableBytes));
    if (tableCrc != load32(table.data() + tableBytes))
        in.corrupt(pos, "shard table " + crcMismatch(load32(table.data() + tableBytes), tableCrc));
    pos += tableBytes + kCrcBytes;

    if (metadataBytes > in.left(pos))
        in.corrupt(pos, "truncated metadata (needs " + std::to_string(metadataBytes) + " bytes, the file has " +
                            std::to_string(in.left(pos)) + " from here)");
    const uint64_t metadataOffset = pos;
    pos += metadataBytes;

    // The table, entry by entry: names, lengths against what the file holds, shard offsets.
    struct Span {
        uint64_t offset, bytes;
        uint32_t crc;
    };
    std::vector<Span> spans;
    Checkpoint ck;
    ck.path_ = path;
    ck.shards_.reserve(static_cast<size_t>(count));
    spans.reserve(static_cast<size_t>(count));
    std::unordered_set<std::string> seen;
    const uint8_t* t = table.data();
    const uint8_t* const tableEnd = t + tableBytes;
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t entryOffset = kHeaderBytes + static_cast<uint64_t>(t - table.data());
        const std::string entry = "shard table entry " + std::to_string(i);
        if (tableEnd - t < 4) in.corrupt(entryOffset, entry + " runs past the end of the table");
        const uint32_t nameBytes = load32(t);
        if (nameBytes == 0 || nameBytes > kMaxNameBytes)
            in.corrupt(entryOffset, entry + ": name length " + std::to_string(nameBytes) + " (must be 1 to " +
                                        std::to_string(kMaxNameBytes) + ")");
        if (static_cast<size_t>(tableEnd - t) < kEntryFixedBytes + nameBytes)
            in.corrupt(entryOffset, entry + " runs past the end of the table");
        std::string name(reinterpret_cast<const char*>(t + 4), nameBytes);
        const uint64_t bytes = load64(t + 4 + nameBytes);
        const uint32_t crc = load32(t + 12 + nameBytes);
        t += kEntryFixedBytes + nameBytes;
        if (!seen.insert(name).second) in.corrupt(entryOffset, "duplicate shard name '" + name + "'");
        if (bytes > in.left(pos))
            in.corrupt(pos, "shard '" + name + "' is truncated: its length " + std::to_string(bytes) +
                                " runs past the end of the file (" + std::to_string(in.left(pos)) + " bytes left)");
        spans.push_back({pos, bytes, crc});
        ck.shards_.push_back({std::move(name), {}});
        pos += bytes;
    }
    if (t != tableEnd)
        in.corrupt(kHeaderBytes + static_cast<uint64_t>(t - table.data()),
                   std::to_string(tableEnd - t) + " unused bytes at the end of the shard table");
    if (pos != size) in.corrupt(pos, std::to_string(size - pos) + " unexpected bytes after the last shard");

    // Every length now lies within the file: allocate and read, one request per part.
    ck.metadata_.resize(static_cast<size_t>(metadataBytes));
    in.readAt(metadataOffset, ck.metadata_.data(), ck.metadata_.size(), "metadata");
    const uint32_t metadataCrc = crc32c(ck.metadata_.data(), ck.metadata_.size());
    if (metadataCrc != load32(h + kMetadataCrcOffset))
        in.corrupt(metadataOffset, "metadata " + crcMismatch(load32(h + kMetadataCrcOffset), metadataCrc));
    for (size_t i = 0; i < spans.size(); ++i) {
        CheckpointShard& sh = ck.shards_[i];
        sh.bytes.resize(static_cast<size_t>(spans[i].bytes));
        in.readAt(spans[i].offset, sh.bytes.data(), sh.bytes.size(), "shard data");
        const uint32_t crc = crc32c(sh.bytes.data(), sh.bytes.size());
        if (crc != spans[i].crc) in.corrupt(spans[i].offset, "shard '" + sh.name + "': data " + crcMismatch(spans[i].crc, crc));
    }
    return ck;
}

bool Checkpoint::has(std::string_view name) const {
    return std::any_of(shards_.begin(), shards_.end(), [&](const CheckpointShard& s) { return s.name == name; });
}

const CheckpointShard& Checkpoint::find(std::string_view name) const {
    for (const CheckpointShard& s : shards_)
        if (s.name == name) return s;
    throw CheckpointError(path_ + ": checkpoint has no shard '" + std::string(name) + "' (it holds " +
                          listNames(shards_) + ")");
}

const std::vector<uint8_t>& Checkpoint::bytes(std::string_view name) const { return find(name).bytes; }

std::vector<float> Checkpoint::floats(std::string_view name) const {
    const CheckpointShard& s = find(name);
    if (s.bytes.size() % sizeof(float) != 0)
        throw CheckpointError(path_ + ": shard '" + s.name + "' holds " + std::to_string(s.bytes.size()) +
                              " bytes, not a whole number of float32 values");
    std::vector<float> out(s.bytes.size() / sizeof(float));
    if (!out.empty()) std::memcpy(out.data(), s.bytes.data(), s.bytes.size());
    return out;
}

void Checkpoint::copyFloats(std::string_view name, std::span<float> out) const {
    const CheckpointShard& s = find(name);
    if (s.bytes.size() != out.size_bytes())
        throw CheckpointError(path_ + ": shard '" + s.name + "' holds " + std::to_string(s.bytes.size()) +
                              " bytes (" + std::to_string(s.bytes.size() / sizeof(float)) + " float32 values), " +
                              std::to_string(out.size()) + " expected");
    if (!out.empty()) std::memcpy(out.data(), s.bytes.data(), s.bytes.size());
}

}  // namespace trainbench::engine
