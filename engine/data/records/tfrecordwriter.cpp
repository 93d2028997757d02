#include "engine/data/records/tfrecord.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "engine/data/records/crc32c.h"
#include "engine/data/records/tfrecordformat.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using namespace tfrecord;

namespace {

std::string systemError(int err) {
    std::string s = std::strerror(err);
    if (err == ENOSPC || err == EDQUOT) s += " (disk full)";
    return s;
}

}  // namespace

struct TFRecordWriter::Impl {
    std::string path;
    Compression compression;
    int fd = -1;
    z_stream zs{};
    bool zlibReady = false;
    std::vector<uint8_t> pending;  // framed records not yet handed on
    std::vector<uint8_t> zout;     // deflate output not yet written
    size_t zoutUsed = 0;
    int64_t records = 0;
    uint64_t written = 0;
    bool closed = false;
    std::string error;  // the first failure; close() repeats it

    [[noreturn]] void fail(const std::string& what) {
        if (error.empty()) error = path + ": " + what;
        throw DataError(error);
    }

    void writeAll(const uint8_t* p, size_t n) {
        while (n > 0) {
            const ssize_t r = ::write(fd, p, n);
            if (r < 0) {
                if (errno == EINTR) continue;
                const int err = errno;
                fail("cannot write after " + std::to_string(written) + " bytes: " + systemError(err));
            }
            p += r;
            n -= static_cast<size_t>(r);
            written += static_cast<uint64_t>(r);
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

    void closeFd() {
        if (fd < 0) return;
        const int rc = ::close(fd);
        const int err = errno;
        fd = -1;
        if (rc != 0 && err != EINTR) fail("cannot close: " + systemError(err));
    }
};

TFRecordWriter::TFRecordWriter(const std::string& path, Compression compression) : impl_(std::make_unique<Impl>()) {
    Impl& w = *impl_;
    w.path = path;
    w.compression = compression;
    do {
        w.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    } while (w.fd < 0 && errno == EINTR);
    if (w.fd < 0) throw DataError(path + ": cannot create: " + systemError(errno));
    w.pending.reserve(kChunkBytes);
    if (compression == Compression::kZlib) {
        // TensorFlow's "ZLIB": one zlib-wrapped deflate stream (window bits 15), default level.
        if (deflateInit(&w.zs, Z_DEFAULT_COMPRESSION) != Z_OK) {
            ::close(w.fd);
            throw DataError(path + ": cannot start zlib compression (out of memory?)");
        }
        w.zlibReady = true;
        w.zout.resize(kChunkBytes);
    }
}

TFRecordWriter::~TFRecordWriter() {
    try {
        close();
    } catch (...) {
        // Documented: the destructor cannot report; callers that care call close().
    }
    if (impl_->zlibReady) deflateEnd(&impl_->zs);
    if (impl_->fd >= 0) ::close(impl_->fd);
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
        // Devices and some file systems cannot sync; that is not a failure of the data.
        if (::fsync(w.fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP) {
            const int err = errno;
            w.fail("cannot sync to disk: " + systemError(err));
        }
    } catch (...) {
        ::close(w.fd);
        w.fd = -1;
        throw;
    }
    w.closeFd();
}

int64_t TFRecordWriter::records() const { return impl_->records; }
uint64_t TFRecordWriter::bytesWritten() const { return impl_->written; }

}  // namespace trainbench::engine
