#pragma once
// TFRecord files, byte-compatible with TensorFlow's tf.io.TFRecordWriter / TFRecordDataset:
//   u64 length (little-endian) | u32 masked CRC-32C of the length | data | u32 masked CRC-32C of data
// optionally wrapped in one zlib stream (TensorFlow's compression_type "ZLIB").
#include <cstdint>
#include <memory>
#include <string>

#include "engine/data/storage/storage.h"

namespace trainbench::engine {

enum class Compression : uint8_t { kNone, kZlib };
// "none" / "zlib" (TensorFlow's "" / "ZLIB"); throws std::invalid_argument for anything else.
Compression parseCompression(const std::string& name);
const char* compressionName(Compression c);

// Writes records to a new file (truncating). Data reaches the file by close() at the latest;
// close() flushes and fsyncs and throws DataError naming the file when the disk is full or fails.
class TFRecordWriter {
public:
    TFRecordWriter(const std::string& path, Compression compression = Compression::kNone);
    ~TFRecordWriter();  // closes without throwing (errors are lost: call close() to see them)
    void write(const void* data, size_t n);
    void write(const std::string& s) { write(s.data(), s.size()); }
    void close();
    int64_t records() const;
    uint64_t bytesWritten() const;  // bytes in the file so far (compressed, when compressing)
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Reads records in order from a file opened through a Storage.
//
// A corrupt record raises DataError in the form
//   "<path>: corrupted record at byte offset <N>: <kind>"
// where kind is "length CRC mismatch", "data CRC mismatch", "truncated record (needs <A> bytes,
// <B> left)" or "truncated length header". A length larger than what is left of the file is
// rejected as a corrupted length before anything is allocated. With skip_corrupt the reader instead
// counts the record, resynchronises where it can (after a data CRC mismatch the framing is intact;
// after a bad length the rest of the file is skipped) and goes on; skipped() tells how many.
// Offsets refer to the uncompressed stream for zlib files.
class TFRecordReader {
public:
    TFRecordReader(std::unique_ptr<StorageFile> file, Compression compression = Compression::kNone,
                   bool skip_corrupt = false);
    ~TFRecordReader();
    // Reads the next record into `out` (reusing its capacity); false at a clean end of file.
    // `offset`, if given, receives the record's byte offset.
    bool next(std::string& out, uint64_t* offset = nullptr);
    int64_t skipped() const;
    const std::string& path() const;
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
