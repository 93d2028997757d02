#include "engine/net/framing.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "engine/util/errors.h"
#include "engine/util/littleendian.h"

namespace trainbench::engine::framing {

namespace {

template <class T>
void put(std::string& out, T v) {
    for (size_t i = 0; i < sizeof(T); ++i) out += static_cast<char>(static_cast<uint64_t>(v) >> (8 * i));
}

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

}  // namespace

std::string encode(uint16_t type, std::string_view payload) {
    std::string out;
    out.reserve(kHeaderBytes + payload.size());
    put<uint32_t>(out, kMagic);
    put<uint16_t>(out, kVersion);
    put<uint16_t>(out, type);
    put<uint64_t>(out, payload.size());
    out.append(payload);
    return out;
}

void FrameDecoder::fail(const std::string& what) {
    failed_ = true;
    throw ProtocolError(what);
}

void FrameDecoder::feed(const uint8_t* data, size_t n, std::vector<Frame>& out) {
    if (failed_) throw ProtocolError("the connection broke the protocol before; nothing more is read from it");
    while (n > 0) {
        if (!inPayload_) {
            const size_t take = std::min(n, kHeaderBytes - headerHave_);
            std::memcpy(header_ + headerHave_, data, take);
            headerHave_ += take;
            data += take;
            n -= take;
            offset_ += take;
            if (headerHave_ < kHeaderBytes) return;
            const std::string at = " at byte offset " + std::to_string(frameStart_);
            const uint32_t magic = load32(header_);
            if (magic != kMagic)
                fail("bad magic " + hex32(magic) + at + " (expected " + hex32(kMagic) + ": not a trainbench message)");
            const uint16_t version = load16(header_ + 4);
            if (version != kVersion)
                fail("protocol version " + std::to_string(version) + at + " (this build speaks version " +
                     std::to_string(kVersion) + ")");
            const uint16_t type = load16(header_ + 6);
            if (type == 0 || type > kMaxType) fail("unknown message type " + std::to_string(type) + at);
            const uint64_t length = load64(header_ + 8);
            if (length > maxPayload_)
                fail("message of type " + std::to_string(type) + at + " says " + std::to_string(length) +
                     " payload bytes, more than the " + std::to_string(maxPayload_) + " allowed");
            current_ = Frame{type, {}};
            payloadWant_ = length;
            inPayload_ = true;
        }
        // Payload: grows as bytes arrive, never ahead of them, so a lying length costs nothing.
        const size_t take = static_cast<size_t>(std::min<uint64_t>(n, payloadWant_ - current_.payload.size()));
        current_.payload.insert(current_.payload.end(), data, data + take);
        data += take;
        n -= take;
        offset_ += take;
        if (current_.payload.size() == payloadWant_) {
            out.push_back(std::move(current_));
            current_ = Frame{};
            inPayload_ = false;
            headerHave_ = 0;
            frameStart_ = offset_;
        }
    }
}

void FrameDecoder::finish() const {
    if (failed_) return;
    if (inPayload_)
        throw ProtocolError("truncated frame at byte offset " + std::to_string(frameStart_) + ": its header says " +
                            std::to_string(payloadWant_) + " payload bytes, the stream ended after " +
                            std::to_string(current_.payload.size()));
    if (headerHave_ > 0)
        throw ProtocolError("truncated frame at byte offset " + std::to_string(frameStart_) + ": the stream ended " +
                            std::to_string(headerHave_) + " bytes into its " + std::to_string(kHeaderBytes) +
                            "-byte header");
}

PayloadWriter& PayloadWriter::u32(uint32_t v) {
    put<uint32_t>(buf_, v);
    return *this;
}
PayloadWriter& PayloadWriter::u64(uint64_t v) {
    put<uint64_t>(buf_, v);
    return *this;
}
PayloadWriter& PayloadWriter::f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return u64(bits);
}
PayloadWriter& PayloadWriter::str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    buf_.append(s);
    return *this;
}
PayloadWriter& PayloadWriter::floats(const float* p, uint64_t n) {
    u64(n);
    buf_.append(reinterpret_cast<const char*>(p), static_cast<size_t>(n) * sizeof(float));  // little-endian host
    return *this;
}

PayloadWriter& PayloadWriter::int32s(const int32_t* p, uint64_t n) {
    u64(n);
    buf_.append(reinterpret_cast<const char*>(p), static_cast<size_t>(n) * sizeof(int32_t));  // little-endian host
    return *this;
}

PayloadReader::PayloadReader(const Frame& frame, const char* typeName)
    : p_(frame.payload.data()), end_(frame.payload.data() + frame.payload.size()), typeName_(typeName) {}

const uint8_t* PayloadReader::take(size_t n, const char* field) {
    if (static_cast<size_t>(end_ - p_) < n)
        throw ProtocolError(typeName_ + " message: field '" + field + "' needs " + std::to_string(n) + " bytes, " +
                            std::to_string(end_ - p_) + " are left");
    const uint8_t* at = p_;
    p_ += n;
    return at;
}

uint32_t PayloadReader::u32(const char* field) { return load32(take(4, field)); }
uint64_t PayloadReader::u64(const char* field) { return load64(take(8, field)); }
double PayloadReader::f64(const char* field) {
    const uint64_t bits = u64(field);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

std::string PayloadReader::str(const char* field, uint32_t maxBytes) {
    const uint32_t n = u32(field);
    if (n > maxBytes)
        throw ProtocolError(typeName_ + " message: field '" + field + "' is " + std::to_string(n) +
                            " bytes, more than " + std::to_string(maxBytes));
    const uint8_t* p = take(n, field);
    return std::string(reinterpret_cast<const char*>(p), n);
}

template <class T>
void PayloadReader::array(const char* field, const char* what, std::vector<T>& out, int64_t expected) {
    const uint64_t n = u64(field);
    if (expected >= 0 && n != static_cast<uint64_t>(expected))
        throw ProtocolError(typeName_ + " message: field '" + field + "' has " + std::to_string(n) + " values, " +
                            std::to_string(expected) + " expected");
    if (n > static_cast<uint64_t>(end_ - p_) / sizeof(T))
        throw ProtocolError(typeName_ + " message: field '" + field + "' says " + std::to_string(n) + " " + what +
                            ", " + std::to_string(end_ - p_) + " bytes are left");
    const uint8_t* p = take(static_cast<size_t>(n) * sizeof(T), field);
    out.resize(static_cast<size_t>(n));
    if (n) std::memcpy(out.data(), p, static_cast<size_t>(n) * sizeof(T));
}

void PayloadReader::floats(const char* field, std::vector<float>& out, int64_t expected) {
    array(field, "floats", out, expected);
}

void PayloadReader::int32s(const char* field, std::vector<int32_t>& out, int64_t expected) {
    array(field, "int32 values", out, expected);
}

void PayloadReader::end() {
    if (p_ != end_)
        throw ProtocolError(typeName_ + " message: " + std::to_string(end_ - p_) + " unexpected bytes after its fields");
}

}  // namespace trainbench::engine::framing
