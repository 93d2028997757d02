#include "engine/data/idxreader.h"

#include "engine/util/errors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
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
// zlib's default 8 KiB buffer costs a syscall per 8 KiB; 1 MiB keeps a 26 MB read to a few dozen.
constexpr unsigned kGzBufferBytes = 1u << 20;
// gzread takes an unsigned int length; stay well inside it.
constexpr size_t kMaxGzReadBytes = 1u << 30;
constexpr size_t kDrainChunkBytes = 1u << 16;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw DataError(path + ": " + what);
}

std::string hexByte(uint8_t b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(b));
    return buf;
}

// One input file, plain or gzip, read front to back exactly once. Gzip is recognised by its
// magic bytes so a decompressed file keeps working whatever it is named, and vice versa.
class ByteSource {
public:
    explicit ByteSource(const std::string& path) : path_(path) {
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) fail(path_, std::string("cannot open: ") + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd_, &st) != 0) failErrno("cannot stat");
        if (S_ISDIR(st.st_mode)) fail(path_, "is a directory, not an IDX file");
        file_bytes_ = static_cast<uint64_t>(st.st_size);

        unsigned char magic[2] = {0, 0};
        // pread leaves the file offset at 0 for gzdopen / read below.
        const ssize_t n = ::pread(fd_, magic, 2, 0);
        if (n < 0) failErrno("cannot read");
        if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
            gz_ = gzdopen(fd_, "rb");
            if (gz_ == nullptr) fail(path_, "cannot start gzip decompression (out of memory?)");
            fd_ = -1;  // owned by gz_ now
            gzbuffer(gz_, kGzBufferBytes);
        }
    }

    ~ByteSource() {
        if (gz_ != nullptr) gzclose_r(gz_);
        if (fd_ >= 0) ::close(fd_);
    }
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;

    bool gzip() const { return gz_ != nullptr; }
    uint64_t fileBytes() const { return file_bytes_; }
    // The stream offset messages refer to: decompressed bytes for gzip, file bytes otherwise.
    uint64_t offset() const { return delivered_; }
    // " (decompressed)" after an offset into a gzip stream, so nobody looks for it with hexdump.
    const char* offsetNote() const { return gzip() ? " (decompressed)" : ""; }

    // Reads up to n bytes; fewer only at the end of the stream. Throws DataError on an I/O error
    // or a corrupt or truncated gzip stream, so a short count always means a clean end.
    size_t read(void* dst, size_t n) {
        auto* out = static_cast<unsigned char*>(dst);
        size_t got = 0;
        while (got < n) {
            const size_t want = std::min(n - got, kMaxGzReadBytes);
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

    // Closes the file; gzclose_r reports errors that only show up at the very end.
    void finish() {
        if (gz_ != nullptr) {
            const int rc = gzclose_r(gz_);
            gz_ = nullptr;
            if (rc == Z_BUF_ERROR) failTruncated();
            if (rc != Z_OK) fail(path_, "error closing gzip stream (zlib code " + std::to_string(rc) + ")");
        } else if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }

private:
    [[noreturn]] void failErrno(const char* what) {
        const int err = errno;
        fail(path_, std::string(what) + ": " + std::strerror(err));
    }

    [[noreturn]] void failTruncated() {
        fail(path_, "truncated gzip stream: compressed data ends after " + std::to_string(delivered_) +
                        " decompressed bytes (compressed file is " + std::to_string(file_bytes_) +
                        " bytes); the file was cut short, download or copy it again");
    }

    size_t readPlain(unsigned char* dst, size_t n) {
        for (;;) {
            const ssize_t r = ::read(fd_, dst, n);
            if (r >= 0) return static_cast<size_t>(r);
            if (errno == EINTR) continue;
            const int err = errno;  // before any allocation can touch it
            fail(path_, "read error at byte offset " + std::to_string(delivered_) + ": " + std::strerror(err));
        }
    }

    size_t readGz(unsigned char* dst, size_t n) {
        const int r = gzread(gz_, dst, static_cast<unsigned>(n));
        const size_t got = static_cast<size_t>(std::max(r, 0));
        int errnum = Z_OK;
        const char* msg = gzerror(gz_, &errnum);
        // zlib inflates ahead into its own buffer, so it flags a stream that stops before its
        // trailer (Z_BUF_ERROR) while it still holds good bytes to hand out. Only a short read
        // means they are used up; failing then makes the message say where the data really ends.
        if (errnum == Z_BUF_ERROR) {
            if (got == n) return got;
            delivered_ += got;
            failTruncated();
        }
        if (r < 0 || errnum != Z_OK) {
            std::string why = errnum == Z_ERRNO ? std::strerror(errno) : std::string(msg ? msg : "?");
            // gzerror prefixes the name it was opened with, "<fd:3>: " after gzdopen; we name the path.
            if (why.rfind("<fd:", 0) == 0 && why.find(": ") != std::string::npos) why.erase(0, why.find(": ") + 2);
            // No offset: zlib inflates ahead, so where it noticed says little about where the damage is.
            fail(path_, "corrupt gzip stream: " + why + "; the file is damaged, download or copy it again");
        }
        return got;
    }

    std::string path_;
    int fd_ = -1;
    gzFile gz_ = nullptr;
    uint64_t file_bytes_ = 0;
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
    ByteSource src(path);
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
    src.finish();
    return out;
}

}  // namespace trainbench::engine
