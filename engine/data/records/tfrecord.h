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

// Writes records to a file, whole or not at all (engine/io/atomicfilewriter.h): the records go to a
// temporary file, and close() fsyncs it and puts it in place of `path`. Until then, and for good
// when close() fails, the writer is destroyed first or the process is killed, `path` keeps what it
// held. Errors are DataErrors (FileWriteError) naming the file: "<path>: TFRecord file not saved:
// cannot write (N bytes written): No space left on device (disk full)". Writes are buffered
// (1 MiB), so a failing disk may show in write() already; after a failure every later write() or
// close() repeats the error, and write() after close() is a std::logic_error.
class TFRecordWriter {
public:
    TFRecordWriter(const std::string& path, Compression compression = Compression::kNone);
    ~TFRecordWriter();  // without close(): nothing is written (the file is abandoned)
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
// <B> left)" (A = the whole record with its 16 framing bytes, B = what the file holds from N on),
// "truncated length header", or "record length <L> exceeds the limit of 1073741824 bytes" (1 GiB).
// A length larger than what is left of the file is rejected as a truncated record before anything
// is allocated (zlib files, whose size is unknown, grow the record only as data inflates). With
// skip_corrupt the reader instead counts the record, resynchronises where it can (after a data CRC
// mismatch the framing is intact; after a bad length the rest of the file is skipped) and goes on;
// skipped() tells how many. Offsets refer to the uncompressed stream for zlib files.
// A damaged zlib stream ends the file after the records before the damage: "<path>: truncated zlib
// stream: ...", "<path>: corrupt zlib stream after <N> uncompressed bytes: ..." or "<path>:
// unexpected data after the end of the zlib stream ..."; with skip_corrupt it counts as one skipped
// record. After an error, next() throws it again.
//
// Reads go to the StorageFile in chunks of 1 MiB (less for smaller files): one storage request
// each. next() makes no syscall or allocation per record once `out` has grown to the record size.
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
