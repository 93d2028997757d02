#include <cstring>
#include <stdexcept>

#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/checkpointformat.h"
#include "engine/data/records/crc32c.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using namespace checkpointformat;

void CheckpointWriter::add(std::string name, const void* data, size_t bytes) {
    if (name.empty() || name.size() > kMaxNameBytes)
        throw std::invalid_argument("checkpoint shard names are 1 to " + std::to_string(kMaxNameBytes) +
                                    " bytes, not " + std::to_string(name.size()));
    for (const Entry& e : shards_)
        if (e.shard.name == name) throw std::invalid_argument("checkpoint shard '" + name + "' added twice");
    if (bytes > 0 && data == nullptr) throw std::invalid_argument("checkpoint shard '" + name + "': no data");
    if (shards_.size() == UINT32_MAX) throw std::invalid_argument("a checkpoint holds at most 2^32 - 1 shards");
    const auto* p = static_cast<const uint8_t*>(data);
    Entry e{{std::move(name), std::vector<uint8_t>(p, p + bytes)}, crc32c(data, bytes)};
    shards_.push_back(std::move(e));
}

void CheckpointWriter::addFloats(std::string name, std::span<const float> values) {
    add(std::move(name), values.data(), values.size_bytes());
}

uint64_t CheckpointWriter::fileBytes() const {
    uint64_t n = kHeaderBytes + kCrcBytes + metadata_.size();
    for (const Entry& e : shards_) n += kEntryFixedBytes + e.shard.name.size() + e.shard.bytes.size();
    return n;
}

void CheckpointWriter::commit(const std::string& path) const {
    // Header, table, table CRC and metadata are built in one buffer; shard data goes out from the
    // shards themselves, one write each, without another copy.
    size_t tableBytes = 0;
    for (const Entry& e : shards_) tableBytes += kEntryFixedBytes + e.shard.name.size();
    std::vector<uint8_t> front(kHeaderBytes + tableBytes + kCrcBytes + metadata_.size());
    uint8_t* h = front.data();
    std::memcpy(h, kMagic, sizeof kMagic);
    store32(h + kVersionOffset, kVersion);
    store32(h + kCountOffset, static_cast<uint32_t>(shards_.size()));
    store64(h + kTableBytesOffset, tableBytes);
    store64(h + kMetadataBytesOffset, metadata_.size());
    store32(h + kMetadataCrcOffset, crc32c(metadata_.data(), metadata_.size()));
    store32(h + kHeaderCrcOffset, crc32c(h, kHeaderCrcOffset));
    uint8_t* t = h + kHeaderBytes;
    for (const Entry& e : shards_) {
        store32(t, static_cast<uint32_t>(e.shard.name.size()));
        std::memcpy(t + 4, e.shard.name.data(), e.shard.name.size());
        t += 4 + e.shard.name.size();
        store64(t, e.shard.bytes.size());
        store32(t + 8, e.crc);
        t += 12;
    }
    store32(t, crc32c(h + kHeaderBytes, tableBytes));
    std::memcpy(t + kCrcBytes, metadata_.data(), metadata_.size());

    try {
        AtomicFileWriter file(path, {.what = "checkpoint", .expected_bytes = fileBytes()});
        file.write(front.data(), front.size());
        for (const Entry& e : shards_) file.write(e.shard.bytes.data(), e.shard.bytes.size());
        file.commit();
    } catch (const FileWriteError& e) {
        throw CheckpointError(e.what());
    }
}

}  // namespace trainbench::engine
