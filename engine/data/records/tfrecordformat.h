#pragma once
// TFRecord framing shared by the writer and the reader (internal to engine/data/records):
//   u64 length (little-endian) | u32 masked CRC-32C of the length | data | u32 masked CRC-32C of data
#include <cstddef>
#include <cstdint>

#include "engine/util/littleendian.h"

namespace trainbench::engine::tfrecord {

constexpr size_t kHeaderBytes = 12;  // u64 length, u32 masked CRC of the length
constexpr size_t kFooterBytes = 4;   // u32 masked CRC of the data
constexpr size_t kFrameBytes = kHeaderBytes + kFooterBytes;
// Every StorageFile::read is one storage request (one round trip on emulated cloud storage), and
// every write a syscall: both move data in chunks of this size.
constexpr size_t kChunkBytes = size_t{1} << 20;
// deflate/inflate count bytes in unsigned int; feed them at most this much at a time.
constexpr size_t kMaxZlibPiece = size_t{1} << 30;
// No real record comes near this (protobuf messages stop at 2 GiB); a larger length is corruption,
// and refusing it keeps a zlib stream from inflating a bomb into one record.
constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 30;

}  // namespace trainbench::engine::tfrecord
