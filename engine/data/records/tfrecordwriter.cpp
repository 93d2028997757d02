#include "engine/data/records/tfrecord.h"

#include <zlib.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/data/records/crc32c.h"
#include "engine/data/records/tfrecordformat.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using namespace tfrecord;

struct TFRecordWriter::Impl {
    std::string path;
    Compression compression;
    std::optional<AtomicFileWriter> file;
    z_stream zs{};
    bool zlibReady = false;
    std::vector<uint8_t> pending;  // framed records not yet handed on
    std::vector<uint8_t> zout;     // deflate output not yet written
    size_t zoutUsed = 0;
    int64_t records = 0;
    uint64_t written = 0;  // the file's size, once closed
    bool closed = false;
    std::string error;  // the first failure; close() repeats it

    [[noreturn]] void fail(const std::string& what) {
        if (error.empty()) error = path + ": " + what;
        throw DataError(error);
    }

    void writeAll(const uint8_t* p, size_t n) {
        try {
            file->write(p, n);
        } catch (const FileWriteError& e) {
            if (error.empty()) error = e.what();
            throw;
        }
    }

    // Runs deflate over [p, p + n); with Z_FINISH, until the stream is complete.
    void compress(const uint8_t* p, size_t n, int flush) {
        zs.next_in = const_cast<Bytef*>(p);
        for (;;) {
            const size_t piece = std::min(n, kMaxZlibPiece);
            zs.avail_in = static_cast<uInt>(piece);
            n -= piece;
            const int mode = n == 0 ? flush : Z_NO_FLUSH;
            for (;;) {
                if (zoutUsed == zout.size()) {
                    writeAll(zout.data(), zoutUsed);
                    zoutUsed = 0;
                }
                zs.next_out = zout.data() + zoutUsed;
                zs.avail_out = static_cast<uInt>(zout.size() - zoutUsed);
                const int rc = deflate(&zs, mode);
                zoutUsed = zout.size() - zs.avail_out;
                if (rc == Z_STREAM_ERROR) fail("zlib compression failed");
                if (mode == Z_FINISH ? rc == Z_STREAM_END : (zs.avail_in == 0 && zs.avail_out > 0)) break;
            }
            if (n == 0) return;
        }
    }

    void emit(const uint8_t* p, size_t n) {
        if (compression == Compression::kZlib)
            compress(p, n, Z_NO_FLUSH);
        else
            writeAll(p, n);
    }

    void flushPending() {
        if (pending.empty()) return;
        emit(pending.data(), pending.size());
        pending.clear();
    }

    void append(const uint8_t* p, size_t n) {
        if (n == 0) return;
        if (pending.size() + n > kChunkBytes) flushPending();
        if (n >= kChunkBytes)
            emit(p, n);  // a big record goes on without a copy
        else
            pending.insert(pending.end(), p, p + n);
    }
};

TFRecordWriter::TFRecordWriter(const std::string& path, Compression compression) : impl_(std::make_unique<Impl>()) {
    Impl& w = *impl_;
    w.path = path;
    w.compression = compression;
    w.file.emplace(path, AtomicFileOptions{.what = "TFRecord file"});
    w.pending.reserve(kChunkBytes);
    if (compression == Compression::kZlib) {
        // TensorFlow's "ZLIB": one zlib-wrapped deflate stream (window bits 15), default level.
        if (deflateInit(&w.zs, Z_DEFAULT_COMPRESSION) != Z_OK)
            throw DataError(path + ": cannot start zlib compression (out of memory?)");
        w.zlibReady = true;
        w.zout.resize(kChunkBytes);
    }
}

// Without close() the file is abandoned (AtomicFileWriter): a writer unwound by an error leaves no
// short file under its name.
TFRecordWriter::~TFRecordWriter() {
    if (impl_->zlibReady) deflateEnd(&impl_->zs);
}

void TFRecordWriter::write(const void* data, size_t n) {
    Impl& w = *impl_;
    if (w.closed) throw std::logic_error(w.path + ": TFRecordWriter::write after close");
    if (!w.error.empty()) throw DataError(w.error);
    uint8_t header[kHeaderBytes];
    store64(header, n);
    store32(header + 8, maskCrc(crc32c(header, 8)));
    uint8_t footer[kFooterBytes];
    store32(footer, maskCrc(crc32c(data, n)));
    w.append(header, sizeof header);
    w.append(static_cast<const uint8_t*>(data), n);
    w.append(footer, sizeof footer);
    ++w.records;
}

void TFRecordWriter::close() {
    Impl& w = *impl_;
    if (w.closed) {
        if (!w.error.empty()) throw DataError(w.error);
        return;
    }
    w.closed = true;
    try {
        if (!w.error.empty()) throw DataError(w.error);
        w.flushPending();
        if (w.compression == Compression::kZlib) {
            w.compress(nullptr, 0, Z_FINISH);
            w.writeAll(w.zout.data(), w.zoutUsed);
            w.zoutUsed = 0;
        }
        w.written = w.file->bytesWritten();
        w.file->commit();
    } catch (const std::exception& e) {
        if (w.error.empty()) w.error = e.what();
        w.file.reset();  // abandoned: the target keeps what it held
        throw;
    }
    w.file.reset();
}

int64_t TFRecordWriter::records() const { return impl_->records; }
uint64_t TFRecordWriter::bytesWritten() const { return impl_->file ? impl_->file->bytesWritten() : impl_->written; }

}  // namespace trainbench::engine
