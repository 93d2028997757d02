#pragma once
// The wire-format walk behind decodeExample: checks a serialized tf.train.Example the way
// protobuf's parser does (same limits, same merge rules) and finds a few named features in it
// without building the feature map or allocating. Internal to engine/data/records.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace trainbench::engine {

enum class FeatureKind : uint8_t { kMissing, kEmpty, kBytes, kFloat, kInt64 };

// "is missing", "has no value list", "is a bytes_list", ... for messages.
const char* describeKind(FeatureKind kind);

// One feature as protobuf would hold it after parsing: the last map entry with its name wins, and
// inside it the list of the kind set last, with all values merged since that kind was set.
struct FeatureValues {
    FeatureKind kind = FeatureKind::kMissing;
    size_t count = 0;                 // values (byte strings for kBytes)
    std::span<const uint8_t> bytes;   // kBytes: the last string
    int64_t last = 0;                 // kInt64: the last value
    // Where the values are, for copyFloats: the map entry and the list occurrence the run starts at.
    std::span<const uint8_t> entry;
    size_t firstList = 0;
};

class ExampleWireReader {
public:
    static constexpr size_t kMaxNames = 5;

    // `where` prefixes error messages ("file: record at byte offset N"); `names` are the features
    // to find (at most kMaxNames; the reader keeps views of them, so they must outlive it).
    ExampleWireReader(const uint8_t* data, size_t size, const std::string& where,
                      std::initializer_list<std::string_view> names);

    // Walks the whole message. Throws DataError "<where>: not a valid Example: <what> at byte <N>"
    // for anything protobuf would refuse to parse.
    void walk();
    // The i-th named feature, after walk().
    FeatureValues feature(size_t i) const;
    // Copies a kFloat feature's values (v.count floats) to dst.
    void copyFloats(const FeatureValues& v, float* dst) const;

private:
    [[noreturn]] void invalid(const char* what, const uint8_t* at) const;
    uint32_t readTag(const uint8_t*& p, const uint8_t* end) const;
    uint64_t readVarint(const uint8_t*& p, const uint8_t* end) const;
    std::span<const uint8_t> readDelimited(const uint8_t*& p, const uint8_t* end) const;
    void skipField(uint32_t tag, const uint8_t*& p, const uint8_t* end, int depth) const;
    void checkEnd(uint32_t tag, const uint8_t* at) const;

    void walkFeatures(std::span<const uint8_t> msg, int depth);
    void walkEntry(std::span<const uint8_t> msg, int depth);
    void walkFeature(std::span<const uint8_t> msg, int depth) const;
    void walkList(FeatureKind kind, std::span<const uint8_t> msg, int depth) const;
    template <class Fn>
    void forEachList(std::span<const uint8_t> entry, Fn&& fn) const;

    const uint8_t* data_;
    size_t size_;
    const std::string& where_;
    std::array<std::string_view, kMaxNames> names_{};
    size_t nameCount_ = 0;
    std::array<std::span<const uint8_t>, kMaxNames> entries_{};  // last entry of each name
    std::array<bool, kMaxNames> found_{};
};

}  // namespace trainbench::engine
