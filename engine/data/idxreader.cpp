#include "engine/data/idxreader.h"

#include "engine/data/storage/storage.h"
#include "engine/util/errors.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace trainbench::engine {
namespace {

constexpr size_t kFixedHeaderBytes = 4;  // 00 00 type ndims
constexpr int kMaxDims = 4;
// Deflate cannot compress better than about 1032:1, so a header that claims more data than that
// is wrong before a byte is inflated; the check also keeps a corrupt header from allocating GBs.
constexpr uint64_t kMaxDeflateRatio = 1032;
// inflate counts bytes in unsigned int; feed it at most this much at a time.
constexpr size_t kMaxZlibPiece = size_t{1} << 30;
constexpr size_t kDrainChunkBytes = 1u << 16;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw DataError(path + ": " + what);
}

std::string hexByte(uint8_t b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(b));
    return buf;
}

// One IDX file's bytes in memory, plain or gzip, read front to back exactly once. Gzip is recognised
// by its magic bytes so a decompressed file keeps working whatever it is named, and vice versa.
class ByteSource {
public:
    ByteSource(const uint8_t* data, size_t size, const std::string& path) : path_(path), data_(data), size_(size) {
        if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
            // 15 + 16: gzip wrapper only, as gzread would insist on for a file with this magic.
            if (inflateInit2(&zs_, 15 + 16) != Z_OK) fail(path_, "cannot start gzip decompression (out of memory?)");
            gzip_ = true;
            zs_.next_in = const_cast<Bytef*>(data);
            zs_.avail_in = 0;
        }
    }

    ~ByteSource() {
        if (gzip_) inflateEnd(&zs_);
    }
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;

    bool gzip() const { return gzip_; }
    uint64_t fileBytes() const { return size_; }
    // The stream offset messages refer to: decompressed bytes for gzip, file bytes otherwise.
    uint64_t offset() const { return delivered_; }
    // " (decompressed)" after an offset into a gzip stream, so nobody looks for it with hexdump.
    const char* offsetNote() const { return gzip() ? " (decompressed)" : ""; }

    // Reads up to n bytes; fewer only at the end of the stream. Throws DataError on a corrupt or
    // truncated gzip stream, so a short count always means a clean end.
    size_t read(void* dst, size_t n) {
        auto* out = static_cast<unsigned char*>(dst);
        size_t got = 0;
        while (got < n) {
            const size_t want = std::min(n - got, kMaxZlibPiece);
            const size_t r = gzip() ? readGz(out + got, want) : readPlain(out + got, want);
            got += r;
            delivered_ += r;
            if (r == 0) break;
        }
        return got;
    }

    // Reads to the end and returns how many bytes were left (to report oversized files).
    uint64_t drain() {
        std::vector<unsigned char> scratch(kDrainChunkBytes);
        uint64_t extra = 0;
        for (;;) {
            const size_t r = read(scratch.data(), scratch.size());
            extra += r;
            if (r < scratch.size()) return extra;
        }
    }

private:
    [[noreturn]] void failTruncated() {
        fail(path_, "truncated gzip stream: compressed data ends after " + std::to_string(delivered_) +
                        " decompressed bytes (compressed file is " + std::to_string(size_) +
                        " bytes); the file was cut short, download or copy it again");
    }

    size_t readPlain(unsigned char* dst, size_t n) {
        const size_t r = static_cast<size_t>(std::min<uint64_t>(n, size_ - consumed_));
        if (r > 0) std::memcpy(dst, data_ + consumed_, r);
        consumed_ += r;
        return r;
    }

    // Inflates straight into dst, so output stops exactly where the compressed data does and a
    // truncation message can say how many bytes were good.
    size_t readGz(unsigned char* dst, size_t n) {
        zs_.next_out = dst;
        zs_.avail_out = static_cast<uInt>(n);
        while (zs_.avail_out > 0 && !ended_) {
            if (zs_.avail_in == 0) {
                const size_t piece = static_cast<size_t>(std::min<uint64_t>(size_ - consumed_, kMaxZlibPiece));
                if (piece == 0) {
                    delivered_ += n - zs_.avail_out;
                    failTruncated();
                }
                zs_.next_in = const_cast<Bytef*>(data_ + consumed_);
                zs_.avail_in = static_cast<uInt>(piece);
                consumed_ += piece;
            }
            const int rc = inflate(&zs_, Z_NO_FLUSH);
            if (rc == Z_STREAM_END) {
                // Like gzread: another gzip member may follow; anything else after a member is
                // trailing garbage and ignored.
                const uint64_t left = zs_.avail_in + (size_ - consumed_);
                if (left >= 2 && peek(0) == 0x1f && peek(1) == 0x8b) {
                    inflateReset(&zs_);
                } else {
                    ended_ = true;
                }
            } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs_.avail_in == 0)) {
                const char* why = zs_.msg != nullptr ? zs_.msg : "zlib error";
                // No offset: where zlib noticed says little about where the damage is.
                fail(path_, std::string("corrupt gzip stream: ") + why +
                                "; the file is damaged, download or copy it again");
            }
        }
        return n - zs_.avail_out;
    }

    // The byte `i` places after the next unread compressed byte (0 past the end).
    uint8_t peek(size_t i) const {
        const uint64_t at = consumed_ - zs_.avail_in + i;
        return at < size_ ? data_[at] : 0;
    }

    std::string path_;
    const uint8_t* data_;
    uint64_t size_;
    uint64_t consumed_ = 0;  // compressed bytes handed to inflate (or copied, for plain data)
    bool gzip_ = false;
    bool ended_ = false;
    z_stream zs_{};
    uint64_t delivered_ = 0;
};

[[noreturn]] void failSize(const std::string& path, const IdxArray& a, uint64_t header_bytes,
                           uint64_t expected, uint64_t actual) {
    const uint64_t diff = expected > actual ? expected - actual : actual - expected;
    fail(path, "data size mismatch: the header declares " + idxDimsString(a.dims) + " " +
                   idxTypeName(a.type) + ", so expected " + std::to_string(expected) +
                   " data bytes from byte offset " + std::to_string(header_bytes) + ", but the file holds " +
                   std::to_string(actual) + " (" + std::to_string(diff) +
                   (expected > actual ? " too few)" : " too many)"));
}

}  // namespace

size_t idxElementSize(uint8_t type) {
    switch (type) {
        case kIdxU8: case kIdxI8: return 1;
        case kIdxI16: return 2;
        case kIdxI32: case kIdxF32: return 4;
        case kIdxF64: return 8;
        default: return 0;
    }
}

const char* idxTypeName(uint8_t type) {
    switch (type) {
        case kIdxU8: return "u8";
        case kIdxI8: return "i8";
        case kIdxI16: return "i16";
        case kIdxI32: return "i32";
        case kIdxF32: return "f32";
        case kIdxF64: return "f64";
        default: return "unknown";
    }
}

std::string idxDimsString(const std::vector<int64_t>& dims) {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) {
        // Appended piecewise: GCC 12 at -O3 gives a false -Wrestrict for ("x" + std::string&&).
        if (i > 0) s += 'x';
        s += std::to_string(dims[i]);
    }
    return s.empty() ? "scalar" : s;
}

IdxArray readIdx(const std::string& path) {
    Storage storage;
    const std::vector<uint8_t> bytes = storage.open(path)->readAll();
    return readIdx(bytes, path);
}

IdxArray readIdx(const std::vector<uint8_t>& bytes, const std::string& path) {
    ByteSource src(bytes.data(), bytes.size(), path);
    IdxArray out;

    unsigned char head[kFixedHeaderBytes];
    if (src.read(head, sizeof head) < sizeof head)
        fail(path, "file ends at byte offset " + std::to_string(src.offset()) + src.offsetNote() +
                       ", inside the 4-byte IDX header (00 00 type ndims)");
    if (head[0] != 0 || head[1] != 0)
        fail(path, "bad IDX magic at byte offset 0" + std::string(src.offsetNote()) + ": expected 00 00, found " +
                       hexByte(head[0]) + " " + hexByte(head[1]) +
                       (src.gzip() ? "" : " (neither an IDX file nor a gzip stream)"));
    out.type = head[2];
    const size_t elem = idxElementSize(out.type);
    if (elem == 0)
        fail(path, "unknown IDX element type 0x" + hexByte(out.type) + " at byte offset 2" + src.offsetNote() +
                       " (expected 08 u8, 09 i8, 0b i16, 0c i32, 0d f32 or 0e f64)");
    const int ndims = head[3];
    if (ndims < 1 || ndims > kMaxDims)
        fail(path, "IDX header gives " + std::to_string(ndims) + " dimensions at byte offset 3" +
                       src.offsetNote() + "; 1 to " + std::to_string(kMaxDims) + " are supported");

    unsigned char dimBytes[4 * kMaxDims];
    const size_t dimLen = 4 * static_cast<size_t>(ndims);
    const uint64_t headerBytes = kFixedHeaderBytes + dimLen;
    if (src.read(dimBytes, dimLen) < dimLen)
        fail(path, "file ends at byte offset " + std::to_string(src.offset()) + src.offsetNote() +
                       ", inside the IDX header (" + std::to_string(headerBytes) + " bytes for " +
                       std::to_string(ndims) + " dimensions)");

    // Checked product: four u32 sizes times 8 can overflow 64 bits in a corrupt header.
    uint64_t expected = elem;
    bool overflow = false;
    for (int i = 0; i < ndims; ++i) {
        const unsigned char* p = dimBytes + 4 * i;
        const uint32_t d = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
        out.dims.push_back(d);
        overflow = overflow || __builtin_mul_overflow(expected, uint64_t{d}, &expected);
    }
    if (overflow) expected = std::numeric_limits<uint64_t>::max();

    // Never allocate what the file cannot hold: plain files say exactly, deflate bounds the ratio.
    const uint64_t available = src.fileBytes() > headerBytes ? src.fileBytes() - headerBytes : 0;
    const uint64_t bound = src.gzip() ? src.fileBytes() * kMaxDeflateRatio : available;
    if (expected > bound) {
        const uint64_t actual = src.gzip() ? src.drain() : available;
        failSize(path, out, headerBytes, expected, actual);
    }

    out.data.resize(expected);
    const size_t got = src.read(out.data.data(), expected);
    if (got < expected) failSize(path, out, headerBytes, expected, got);
    // Read on to the end: trailing bytes mean a wrong header, and for gzip this also makes zlib
    // check the CRC and length trailer, which is where a cut-off download shows.
    const uint64_t extra = src.drain();
    if (extra > 0) failSize(path, out, headerBytes, expected, expected + extra);
    return out;
}

}  // namespace trainbench::engine
