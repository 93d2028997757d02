#include "engine/data/records/examplewirereader.h"

#include <climits>
#include <cstring>
#include <stdexcept>

#include "engine/util/errors.h"
#include "engine/util/utf8.h"

namespace trainbench::engine {
namespace {

// Field numbers are TensorFlow's (example.proto, feature.proto). A field of a known number but
// another wire type is an unknown field to protobuf, and so it is here.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kDelimited = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };
constexpr uint32_t tagOf(uint32_t field, WireType type) { return field << 3 | type; }
constexpr uint32_t kExampleFeatures = tagOf(1, kDelimited);
constexpr uint32_t kFeaturesEntry = tagOf(1, kDelimited);
constexpr uint32_t kEntryKey = tagOf(1, kDelimited);
constexpr uint32_t kEntryValue = tagOf(2, kDelimited);
constexpr uint32_t kFeatureBytes = tagOf(1, kDelimited);
constexpr uint32_t kFeatureFloat = tagOf(2, kDelimited);
constexpr uint32_t kFeatureInt64 = tagOf(3, kDelimited);
constexpr uint32_t kListPacked = tagOf(1, kDelimited);  // BytesList's strings have this tag too
constexpr uint32_t kFloatUnpacked = tagOf(1, kFixed32);
constexpr uint32_t kInt64Unpacked = tagOf(1, kVarint);

// protobuf's default recursion limit: sub-messages and groups nested deeper fail to parse.
constexpr int kRecursionLimit = 100;
// protobuf refuses lengths this close to 2 GiB (ParseContext::kSlopBytes is 16).
constexpr uint32_t kMaxLength = INT_MAX - 16;

// The list a Feature field holds, or kEmpty for any other field of a Feature.
FeatureKind kindOf(uint32_t tag) {
    switch (tag) {
        case kFeatureBytes: return FeatureKind::kBytes;
        case kFeatureFloat: return FeatureKind::kFloat;
        case kFeatureInt64: return FeatureKind::kInt64;
        default: return FeatureKind::kEmpty;
    }
}

// UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates, nothing past U+10FFFF): proto3
// string fields, map keys included, must hold it or the message does not parse.
bool validUtf8(std::span<const uint8_t> s) {
    const std::string_view text(reinterpret_cast<const char*>(s.data()), s.size());
    for (size_t i = 0; i < text.size();) {
        const Utf8Sequence seq = utf8SequenceAt(text, i);
        if (!seq.valid) return false;
        i += seq.bytes;
    }
    return true;
}

}  // namespace

const char* describeKind(FeatureKind kind) {
    switch (kind) {
        case FeatureKind::kMissing: return "is missing";
        case FeatureKind::kEmpty: return "has no value list";
        case FeatureKind::kBytes: return "is a bytes_list";
        case FeatureKind::kFloat: return "is a float_list";
        case FeatureKind::kInt64: return "is an int64_list";
    }
    return "is of an unknown kind";
}

ExampleWireReader::ExampleWireReader(const uint8_t* data, size_t size, const std::string& where,
                                     std::initializer_list<std::string_view> names)
    : data_(data), size_(size), where_(where) {
    if (names.size() > kMaxNames) throw std::invalid_argument("ExampleWireReader: too many feature names");
    for (std::string_view name : names) names_[nameCount_++] = name;
}

void ExampleWireReader::invalid(const char* what, const uint8_t* at) const {
    throw DataError(where_ + ": not a valid Example: " + what + " at byte " + std::to_string(at - data_) + " of " +
                    std::to_string(size_));
}

// Tags are varints of at most 5 bytes; protobuf keeps the low 32 bits of a longer value.
uint32_t ExampleWireReader::readTag(const uint8_t*& p, const uint8_t* end) const {
    // Every tag of an Example fits in one byte: take that path first.
    if (p != end && *p < 0x80) [[likely]]
        return *p++;
    const uint8_t* start = p;
    uint32_t v = 0;
    for (int i = 0; i < 5; ++i) {
        if (p == end) invalid("truncated field tag", start);
        const uint8_t b = *p++;
        v |= static_cast<uint32_t>(b & 0x7f) << (7 * i);
        if (b < 0x80) return v;
    }
    invalid("field tag longer than 5 bytes", start);
}

// At most 10 bytes; the value is taken modulo 2^64 like protobuf does.
uint64_t ExampleWireReader::readVarint(const uint8_t*& p, const uint8_t* end) const {
    const uint8_t* start = p;
    uint64_t v = 0;
    for (int i = 0; i < 10; ++i) {
        if (p == end) invalid("truncated varint", start);
        const uint8_t b = *p++;
        v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
        if (b < 0x80) return v;
    }
    invalid("varint longer than 10 bytes", start);
}

// A length (at most 5 bytes, below 2 GiB) and the bytes it covers, inside [p, end).
std::span<const uint8_t> ExampleWireReader::readDelimited(const uint8_t*& p, const uint8_t* end) const {
    const uint8_t* start = p;
    // Lengths below 16 KiB (one or two bytes) are the common case: checked the same way, faster.
    if (end - p >= 2 && (p[0] < 0x80 || p[1] < 0x80)) [[likely]] {
        const uint32_t n = p[0] < 0x80 ? p[0] : (p[0] & 0x7fu) | (static_cast<uint32_t>(p[1]) << 7);
        const uint8_t* data = p + (p[0] < 0x80 ? 1 : 2);
        if (n > static_cast<size_t>(end - data)) invalid("length runs past the end of its message", start);
        p = data + n;
        return {data, n};
    }
    uint32_t len = 0;
    for (int i = 0;; ++i) {
        if (p == end) invalid("truncated length", start);
        const uint8_t b = *p++;
        if (i == 4 && b >= 8) invalid("length of 2 GiB or more", start);
        len |= static_cast<uint32_t>(b & 0x7f) << (7 * i);
        if (b < 0x80) break;
    }
    if (len > kMaxLength) invalid("length of 2 GiB or more", start);
    if (len > static_cast<size_t>(end - p)) invalid("length runs past the end of its message", start);
    const std::span<const uint8_t> s(p, len);
    p += len;
    return s;
}

// Tag 0 and an end-group tag outside a group end a message early: protobuf rejects both.
void ExampleWireReader::checkEnd(uint32_t tag, const uint8_t* at) const {
    if (tag == 0) invalid("zero tag", at);
    if ((tag & 7) == kEndGroup) invalid("end-group tag outside a group", at);
    if ((tag >> 3) == 0) invalid("field number 0", at);
}

void ExampleWireReader::skipField(uint32_t tag, const uint8_t*& p, const uint8_t* end, int depth) const {
    const uint8_t* start = p;
    switch (tag & 7) {
        case kVarint:
            readVarint(p, end);
            return;
        case kFixed64:
            if (end - p < 8) invalid("truncated fixed64 field", start);
            p += 8;
            return;
        case kDelimited:
            readDelimited(p, end);
            return;
        case kFixed32:
            if (end - p < 4) invalid("truncated fixed32 field", start);
            p += 4;
            return;
        case kStartGroup:
            if (depth - 1 < 0) invalid("groups nested too deeply", start);
            for (;;) {
                if (p == end) invalid("unterminated group", start);
                const uint8_t* at = p;
                const uint32_t inner = readTag(p, end);
                if (inner == tag + 1) return;  // the matching end-group tag
                if ((inner & 7) == kEndGroup) invalid("end-group tag that does not match its group", at);
                checkEnd(inner, at);
                skipField(inner, p, end, depth - 1);
            }
        default:
            invalid("unknown wire type", start);
    }
}

void ExampleWireReader::walk() {
    const uint8_t* p = data_;
    const uint8_t* end = data_ + size_;
    while (p < end) {
        const uint8_t* at = p;
        const uint32_t tag = readTag(p, end);
        if (tag == kExampleFeatures) {
            walkFeatures(readDelimited(p, end), kRecursionLimit - 1);
        } else {
            checkEnd(tag, at);
            skipField(tag, p, end, kRecursionLimit);
        }
    }
}

void ExampleWireReader::walkFeatures(std::span<const uint8_t> msg, int depth) {
    const uint8_t* p = msg.data();
    const uint8_t* end = p + msg.size();
    while (p < end) {
        const uint8_t* at = p;
        const uint32_t tag = readTag(p, end);
        if (tag == kFeaturesEntry) {
            if (depth - 1 < 0) invalid("messages nested too deeply", at);
            walkEntry(readDelimited(p, end), depth - 1);
        } else {
            checkEnd(tag, at);
            skipField(tag, p, end, depth);
        }
    }
}

// One map entry: the key as the last key field says (empty without one), the value the merge of
// all value fields. A later entry with the same key replaces the whole value.
void ExampleWireReader::walkEntry(std::span<const uint8_t> msg, int depth) {
    const uint8_t* p = msg.data();
    const uint8_t* end = p + msg.size();
    std::span<const uint8_t> key;
    while (p < end) {
        const uint8_t* at = p;
        const uint32_t tag = readTag(p, end);
        if (tag == kEntryKey) {
            key = readDelimited(p, end);
            if (!validUtf8(key)) invalid("feature name is not valid UTF-8", key.data());
        } else if (tag == kEntryValue) {
            if (depth - 1 < 0) invalid("messages nested too deeply", at);
            walkFeature(readDelimited(p, end), depth - 1);
        } else {
            checkEnd(tag, at);
            skipField(tag, p, end, depth);
        }
    }
    const std::string_view name(reinterpret_cast<const char*>(key.data()), key.size());
    for (size_t i = 0; i < nameCount_; ++i)
        if (name == names_[i]) {
            entries_[i] = msg;
            found_[i] = true;
        }
}

void ExampleWireReader::walkFeature(std::span<const uint8_t> msg, int depth) const {
    const uint8_t* p = msg.data();
    const uint8_t* end = p + msg.size();
    while (p < end) {
        const uint8_t* at = p;
        const uint32_t tag = readTag(p, end);
        const FeatureKind kind = kindOf(tag);
        if (kind != FeatureKind::kEmpty) {
            if (depth - 1 < 0) invalid("messages nested too deeply", at);
            walkList(kind, readDelimited(p, end), depth - 1);
        } else {
            checkEnd(tag, at);
            skipField(tag, p, end, depth);
        }
    }
}

void ExampleWireReader::walkList(FeatureKind kind, std::span<const uint8_t> msg, int depth) const {
    const uint8_t* p = msg.data();
    const uint8_t* end = p + msg.size();
    while (p < end) {
        const uint8_t* at = p;
        const uint32_t tag = readTag(p, end);
        if (tag == kListPacked) {
            const std::span<const uint8_t> values = readDelimited(p, end);
            if (kind == FeatureKind::kFloat && values.size() % 4 != 0)
                invalid("packed float list of a length that is not a multiple of 4", at);
            if (kind == FeatureKind::kInt64)
                for (const uint8_t* q = values.data(); q < values.data() + values.size();)
                    readVarint(q, values.data() + values.size());
        } else if (kind == FeatureKind::kFloat && tag == kFloatUnpacked) {
            if (end - p < 4) invalid("truncated float", at);
            p += 4;
        } else if (kind == FeatureKind::kInt64 && tag == kInt64Unpacked) {
            readVarint(p, end);
        } else {
            checkEnd(tag, at);
            skipField(tag, p, end, depth);
        }
    }
}

// Calls fn(kind, values) for every value list of a map entry walk() has already checked, in the
// order they are stored (the second look: nothing here can fail).
template <class Fn>
void ExampleWireReader::forEachList(std::span<const uint8_t> entry, Fn&& fn) const {
    const uint8_t* p = entry.data();
    const uint8_t* end = p + entry.size();
    while (p < end) {
        const uint32_t tag = readTag(p, end);
        if (tag != kEntryValue) {
            skipField(tag, p, end, kRecursionLimit);
            continue;
        }
        const std::span<const uint8_t> feature = readDelimited(p, end);
        const uint8_t* f = feature.data();
        const uint8_t* fend = f + feature.size();
        while (f < fend) {
            const uint32_t ftag = readTag(f, fend);
            const FeatureKind kind = kindOf(ftag);
            if (kind == FeatureKind::kEmpty) {
                skipField(ftag, f, fend, kRecursionLimit);
                continue;
            }
            fn(kind, readDelimited(f, fend));
        }
    }
}

FeatureValues ExampleWireReader::feature(size_t i) const {
    FeatureValues v;
    if (i >= nameCount_ || !found_[i]) return v;
    v.entry = entries_[i];
    v.kind = FeatureKind::kEmpty;
    size_t list = 0;
    forEachList(v.entry, [&](FeatureKind kind, std::span<const uint8_t> values) {
        // Setting another member of the oneof clears the list; the same one merges into it.
        if (kind != v.kind) {
            v.kind = kind;
            v.count = 0;
            v.firstList = list;
        }
        ++list;
        const uint8_t* q = values.data();
        const uint8_t* qend = q + values.size();
        while (q < qend) {
            const uint32_t vtag = readTag(q, qend);
            if (vtag == kListPacked && kind == FeatureKind::kBytes) {
                v.bytes = readDelimited(q, qend);
                ++v.count;
            } else if (vtag == kListPacked && kind == FeatureKind::kFloat) {
                v.count += readDelimited(q, qend).size() / 4;
            } else if (vtag == kListPacked && kind == FeatureKind::kInt64) {
                const std::span<const uint8_t> packed = readDelimited(q, qend);
                for (const uint8_t* r = packed.data(); r < packed.data() + packed.size(); ++v.count)
                    v.last = static_cast<int64_t>(readVarint(r, packed.data() + packed.size()));
            } else if (vtag == kFloatUnpacked && kind == FeatureKind::kFloat) {
                q += 4;
                ++v.count;
            } else if (vtag == kInt64Unpacked && kind == FeatureKind::kInt64) {
                v.last = static_cast<int64_t>(readVarint(q, qend));
                ++v.count;
            } else {
                skipField(vtag, q, qend, kRecursionLimit);
            }
        }
    });
    return v;
}

void ExampleWireReader::copyFloats(const FeatureValues& v, float* dst) const {
    size_t list = 0;
    forEachList(v.entry, [&](FeatureKind, std::span<const uint8_t> values) {
        if (list++ < v.firstList) return;
        const uint8_t* q = values.data();
        const uint8_t* qend = q + values.size();
        while (q < qend) {
            const uint32_t vtag = readTag(q, qend);
            if (vtag == kListPacked) {
                const std::span<const uint8_t> packed = readDelimited(q, qend);
                if (packed.empty()) continue;
                std::memcpy(dst, packed.data(), packed.size());  // little-endian floats, as stored
                dst += packed.size() / 4;
            } else if (vtag == kFloatUnpacked) {
                std::memcpy(dst++, q, 4);
                q += 4;
            } else {
                skipField(vtag, q, qend, kRecursionLimit);
            }
        }
    });
}

}  // namespace trainbench::engine
