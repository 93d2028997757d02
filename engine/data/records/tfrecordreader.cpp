#include "engine/data/records/tfrecord.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "engine/data/records/crc32c.h"
#include "engine/data/records/tfrecordformat.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using namespace tfrecord;

namespace {

// Small files get buffers of their size (no less than this), so many small shards do not each
// hold megabytes.
constexpr size_t kMinBufferBytes = size_t{4} << 10;
// Deflate cannot compress better than about 1032:1: a bound on what a small zlib file inflates to.
constexpr uint64_t kMaxDeflateRatio = 1032;

size_t bufferFor(uint64_t bytes) {
    return static_cast<size_t>(std::clamp<uint64_t>(bytes, kMinBufferBytes, kChunkBytes));
}

}  // namespace

// Records are parsed from a window buffer [pos, end) that the source refills in chunks: the file
// itself, or inflate over the file. A record that fits in the window is checked and copied in one
// go; a larger one is streamed through the window piece by piece.

struct TFRecordReader::Impl {
    std::unique_ptr<StorageFile> file;
    Compression compression = Compression::kNone;
    bool skipCorrupt = false;
    std::string path;

    std::unique_ptr<uint8_t[]> buf;
    size_t cap = 0;  // buf's size
    size_t pos = 0, end = 0;
    uint64_t bufOffset = 0;   // stream offset of buf[0]
    bool sourceDone = false;  // no byte will follow buf[end - 1]

    // zlib
    z_stream zs{};
    bool zlibReady = false;
    std::unique_ptr<uint8_t[]> zin;
    size_t zinCap = 0;
    bool zinDone = false;
    std::string fault;  // why the zlib stream stopped early (corrupt, cut short, trailing bytes)

    int64_t skipped = 0;
    bool finished = false;
    std::string error;  // a reported error; next() repeats it

    bool plain() const { return compression == Compression::kNone; }
    uint64_t streamPos() const { return bufOffset + pos; }

    size_t readFile(uint8_t* dst, size_t n, bool& done) {
        const size_t got = file->read(dst, n);
        done = got < n || file->position() >= file->size();
        return got;
    }

    size_t inflateInto(uint8_t* dst, size_t n) {
        zs.next_out = dst;
        zs.avail_out = static_cast<uInt>(n);
        while (zs.avail_out > 0) {
            if (zs.avail_in == 0 && !zinDone) {
                zs.next_in = zin.get();
                zs.avail_in = static_cast<uInt>(readFile(zin.get(), zinCap, zinDone));
            }
            const int rc = inflate(&zs, Z_NO_FLUSH);
            if (rc == Z_OK) continue;
            if (rc == Z_STREAM_END) {
                if (zs.avail_in > 0 || file->position() < file->size())
                    fault = "unexpected data after the end of the zlib stream at compressed byte offset " +
                            std::to_string(zs.total_in);
            } else if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
                if (!zinDone) continue;
                fault = "truncated zlib stream: compressed data ends after " + std::to_string(zs.total_out) +
                        " uncompressed bytes (file is " + std::to_string(file->size()) +
                        " bytes); the file was cut short";
            } else if (rc == Z_MEM_ERROR) {
                throw DataError(path + ": out of memory while decompressing");
            } else {
                fault = "corrupt zlib stream after " + std::to_string(zs.total_out) +
                        " uncompressed bytes: " + (zs.msg ? zs.msg : "zlib error " + std::to_string(rc));
            }
            sourceDone = true;
            break;
        }
        return n - zs.avail_out;
    }

    // Makes at least `want` bytes available at pos when the stream still has them; returns how many
    // are available (fewer only at the end of the stream).
    size_t fill(size_t want) {
        if (end - pos >= want || sourceDone) return end - pos;
        // Keep the unread tail (shorter than one record) and refill the rest in one big request.
        std::memmove(buf.get(), buf.get() + pos, end - pos);
        bufOffset += pos;
        end -= pos;
        pos = 0;
        while (end < want && !sourceDone) {
            const size_t room = cap - end;
            end += plain() ? readFile(buf.get() + end, room, sourceDone) : inflateInto(buf.get() + end, room);
        }
        return end;
    }

    // A corrupt record at stream offset `at`: throws, or (skip_corrupt) counts it; with !resume the
    // rest of the file is given up. Returns whether reading goes on.
    bool corrupt(uint64_t at, const std::string& kind, bool resume) {
        if (!skipCorrupt) {
            error = path + ": corrupted record at byte offset " + std::to_string(at) + ": " + kind;
            throw DataError(error);
        }
        ++skipped;
        finished = !resume;
        return resume;
    }

    // The stream has no bytes after `at` + `have`. At a record boundary (have == 0) that is the end
    // of the file, unless the zlib stream broke off: that is the error then, whatever record it cut.
    bool endOfStream(uint64_t at, size_t have, const std::string& kind) {
        if (!fault.empty()) {
            if (!skipCorrupt) {
                error = path + ": " + fault;
                throw DataError(error);
            }
            ++skipped;
            finished = true;
            return false;
        }
        if (have == 0) {
            finished = true;
            return false;
        }
        return corrupt(at, kind, false);
    }

    static std::string truncatedKind(uint64_t need, uint64_t left) {
        return "truncated record (needs " + std::to_string(need) + " bytes, " + std::to_string(left) + " left)";
    }

    // A record larger than the window, its header at pos: streamed into `out` piece by piece.
    // Returns false when it was skipped (skip_corrupt) rather than read; `finished` tells whether
    // reading can go on.
    bool readLarge(std::string& out, uint64_t at, uint64_t len) {
        pos += kHeaderBytes;
        out.clear();
        if (plain()) out.reserve(len);  // the file holds it: checked against its size
        uint32_t crc = 0;
        uint64_t remaining = len;
        while (remaining > 0) {
            size_t avail = end - pos;
            if (avail == 0 && plain() && remaining >= cap && !sourceDone) {
                // Straight from the file into the record: one request instead of a chunk at a time.
                const size_t old = out.size();
                out.resize(old + remaining);
                const size_t got = readFile(reinterpret_cast<uint8_t*>(out.data()) + old, remaining, sourceDone);
                out.resize(old + got);
                crc = crc32c(out.data() + old, got, crc);
                bufOffset += end + got;
                pos = end = 0;
                remaining -= got;
                continue;
            }
            if (avail == 0) avail = fill(static_cast<size_t>(std::min<uint64_t>(remaining + kFooterBytes, cap)));
            if (avail == 0)
                return endOfStream(at, 1, truncatedKind(len + kFrameBytes, streamPos() - at));
            const size_t take = static_cast<size_t>(std::min<uint64_t>(avail, remaining));
            out.append(reinterpret_cast<const char*>(buf.get() + pos), take);
            crc = crc32c(buf.get() + pos, take, crc);
            pos += take;
            remaining -= take;
        }
        const size_t have = fill(kFooterBytes);
        if (have < kFooterBytes)
            return endOfStream(at, 1, truncatedKind(len + kFrameBytes, streamPos() + have - at));
        const uint32_t stored = load32(buf.get() + pos);
        pos += kFooterBytes;
        if (maskCrc(crc) == stored) return true;
        corrupt(at, "data CRC mismatch", true);
        return false;
    }
};

TFRecordReader::TFRecordReader(std::unique_ptr<StorageFile> file, Compression compression, bool skip_corrupt)
    : impl_(std::make_unique<Impl>()) {
    if (!file) throw std::invalid_argument("TFRecordReader: no file");
    Impl& r = *impl_;
    r.path = file->path();
    r.bufOffset = compression == Compression::kNone ? file->position() : 0;
    r.file = std::move(file);
    r.compression = compression;
    r.skipCorrupt = skip_corrupt;
    const uint64_t left = r.file->size() - std::min(r.file->size(), r.file->position());
    if (compression == Compression::kZlib) {
        if (inflateInit(&r.zs) != Z_OK) throw DataError(r.path + ": cannot start zlib decompression (out of memory?)");
        r.zlibReady = true;
        r.zinCap = bufferFor(left);
        r.zin.reset(new uint8_t[r.zinCap]);
        r.cap = bufferFor(left >= kChunkBytes ? kChunkBytes : left * kMaxDeflateRatio);
    } else {
        r.cap = bufferFor(left);
    }
    r.buf.reset(new uint8_t[r.cap]);
}

TFRecordReader::~TFRecordReader() {
    if (impl_->zlibReady) inflateEnd(&impl_->zs);
}

bool TFRecordReader::next(std::string& out, uint64_t* offset) {
    Impl& r = *impl_;
    if (!r.error.empty()) throw DataError(r.error);
    while (!r.finished) {
        const size_t avail = r.fill(kHeaderBytes);
        const uint64_t at = r.streamPos();
        if (avail < kHeaderBytes) {
            r.endOfStream(at, avail, "truncated length header");
            return false;
        }
        const uint8_t* h = r.buf.get() + r.pos;
        const uint64_t len = load64(h);
        if (maskCrc(crc32c(h, 8)) != load32(h + 8)) {
            r.corrupt(at, "length CRC mismatch", false);
            return false;
        }
        if (len > kMaxRecordBytes) {
            r.corrupt(at, "record length " + std::to_string(len) + " exceeds the limit of " +
                              std::to_string(kMaxRecordBytes) + " bytes", false);
            return false;
        }
        const uint64_t need = len + kFrameBytes;
        if (r.plain()) {
            // The file's size bounds the length before a byte is allocated for it.
            const uint64_t fileEnd = std::max(r.file->size(), r.bufOffset + r.end);
            if (need > fileEnd - at) {
                r.corrupt(at, Impl::truncatedKind(need, fileEnd - at), false);
                return false;
            }
        }
        if (need > r.cap) {
            if (!r.readLarge(out, at, len)) continue;
        } else {
            const size_t have = r.fill(need);
            if (have < need) {
                r.endOfStream(at, have, Impl::truncatedKind(need, have));
                return false;
            }
            const uint8_t* data = r.buf.get() + r.pos + kHeaderBytes;
            const size_t n = static_cast<size_t>(len);
            if (maskCrc(crc32c(data, n)) != load32(data + n)) {
                r.pos += need;
                r.corrupt(at, "data CRC mismatch", true);
                continue;
            }
            out.assign(reinterpret_cast<const char*>(data), n);
            r.pos += need;
        }
        if (offset != nullptr) *offset = at;
        return true;
    }
    return false;
}

int64_t TFRecordReader::skipped() const { return impl_->skipped; }
const std::string& TFRecordReader::path() const { return impl_->path; }

}  // namespace trainbench::engine
