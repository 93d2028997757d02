#pragma once
// The checkpoint file layout, shared by the writer and the reader (internal to engine/checkpoint;
// documented byte by byte in docs/checkpoints.md). All integers little-endian.
//
//   header (40 bytes)  magic, version, shard count, table bytes, metadata bytes, metadata CRC, header CRC
//   shard table        per shard: u32 name bytes | name | u64 data bytes | u32 data CRC-32C
//   u32                CRC-32C of the shard table
//   metadata           the caller's text
//   shard data         back to back, in table order
#include <cstddef>
#include <cstdint>

#include "engine/util/littleendian.h"

namespace trainbench::engine::checkpointformat {

// 0x89 (not ASCII, so a text file never matches), "TBCKPT", and a newline that a line-ending
// conversion would mangle. Magic and version keep their place in every future version.
constexpr uint8_t kMagic[8] = {0x89, 'T', 'B', 'C', 'K', 'P', 'T', '\n'};
constexpr uint32_t kVersion = 1;

constexpr size_t kVersionOffset = 8;
constexpr size_t kCountOffset = 12;
constexpr size_t kTableBytesOffset = 16;
constexpr size_t kMetadataBytesOffset = 24;
constexpr size_t kMetadataCrcOffset = 32;
constexpr size_t kHeaderCrcOffset = 36;
constexpr size_t kHeaderBytes = 40;
constexpr size_t kCrcBytes = 4;

// A table entry without its name: u32 name length, u64 data length, u32 CRC.
constexpr size_t kEntryFixedBytes = 16;
constexpr size_t kMaxNameBytes = 4096;

}  // namespace trainbench::engine::checkpointformat
