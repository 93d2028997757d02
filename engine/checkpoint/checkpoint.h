#pragma once
// Checkpoints: named byte blobs (mostly float arrays) plus a metadata text, in one file that is
// replaced atomically and checked with a CRC-32C per part. The layout is in docs/checkpoints.md.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trainbench::engine {

struct CheckpointShard {
    std::string name;
    std::vector<uint8_t> bytes;
};

// Collects shards in memory (copies, CRC computed as they are added) and writes them with commit().
class CheckpointWriter {
public:
    // Shard names are 1 to 4096 bytes and unique within a checkpoint; std::invalid_argument otherwise.
    void add(std::string name, const void* data, size_t bytes);
    // float32 values, stored little-endian (the host's layout: the engine runs on x86-64 only).
    void addFloats(std::string name, std::span<const float> values);
    // Free text for the caller (JSON by convention: step, epoch, seed, strategy, ...); stored as it is.
    void setMetadata(std::string text) { metadata_ = std::move(text); }

    // Writes the checkpoint to `path` whole or not at all (engine/io/atomicfilewriter.h: an unnamed
    // temporary file in the same folder, fsynced, renamed over `path`, the folder fsynced). On any
    // error `path` keeps what it held and CheckpointError names the path and the failing step. A
    // crash (kill, power loss) leaves neither a partial file under `path` nor a temporary file.
    // The writer keeps its shards: commit() may be called again.
    void commit(const std::string& path) const;

    size_t shardCount() const { return shards_.size(); }
    uint64_t fileBytes() const;  // the size commit() writes

private:
    struct Entry {
        CheckpointShard shard;
        uint32_t crc;
    };
    std::vector<Entry> shards_;
    std::string metadata_;
};

// A checkpoint read whole into memory, every CRC checked.
//
// A damaged file raises CheckpointError in one of these forms:
//   "<path>: not a trainbench checkpoint: bad magic at byte offset 0 (...)"
//   "<path>: unsupported checkpoint format version <V> at byte offset 8 (this build reads version 1)"
//   "<path>: corrupt checkpoint at byte offset <N>: <kind>"
// where kind is e.g. "truncated header (...)", "header CRC mismatch (expected 0x..., actual 0x...)",
// "truncated shard table (...)", "shard table CRC mismatch (...)", "duplicate shard name 'w'",
// "truncated metadata (...)", "shard 'w' is truncated: its length <L> runs past the end of the file
// (...)", "shard 'w': data CRC mismatch (...)", "metadata CRC mismatch (...)" or "<K> unexpected
// bytes after the last shard"; docs/checkpoints.md lists them all. Expected is the CRC stored in
// the file, actual the one computed. Every length is checked against the file's size before
// anything is allocated for it.
class Checkpoint {
public:
    static Checkpoint read(const std::string& path);

    const std::string& path() const { return path_; }
    const std::string& metadata() const { return metadata_; }
    const std::vector<CheckpointShard>& shards() const { return shards_; }  // in file order
    bool has(std::string_view name) const;
    // The shard's bytes; CheckpointError naming the shards there are when it is missing.
    const std::vector<uint8_t>& bytes(std::string_view name) const;
    // The shard as float32 values; CheckpointError when its size is not a multiple of 4.
    std::vector<float> floats(std::string_view name) const;
    // Copies the shard into out, which must match its size exactly; CheckpointError naming the shard
    // and both sizes otherwise.
    void copyFloats(std::string_view name, std::span<float> out) const;

private:
    Checkpoint() = default;  // made by read() only
    const CheckpointShard& find(std::string_view name) const;

    std::string path_;
    std::string metadata_;
    std::vector<CheckpointShard> shards_;  // few: found by a linear search
};

}  // namespace trainbench::engine
