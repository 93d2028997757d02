// decodeExample against protobuf's generated parser, on hand-made and random wire bytes: packed and
// unpacked lists, unknown fields and groups, features in any order, duplicate names, oneof
// switches, overlong encodings, nesting limits, UTF-8 names; both accept or both refuse, and
// accepted bytes decode to the same values.
#include <algorithm>
#include <random>

#include "examplewire.h"

namespace trainbench::engine {
namespace {

using namespace exampletest;

TEST(Example, WireVariantsProtobufAccepts) {
    const std::string px = "\x01\x02";
    const std::string label = int64Feature(5);
    // Features in the other order, with other features around them.
    expectAgreement(
        example({entry("label", label), entry("height", int64Feature(28)), entry("image", bytesFeature(px))}), 2,
        "reordered");
    // Unpacked int64 and floats, packed and unpacked runs mixed (they append).
    const std::string unpackedLabel = Wire().bytes(3, Wire().tag(1, 0).varint(5).b).b;
    Wire floats;
    floats.bytes(1, floatBytes({1.5f})).fixed32(1, 0x40000000).bytes(1, floatBytes({3.0f, 4.0f}));
    const std::string mixed = example({entry("image", Wire().bytes(2, floats.b).b), entry("label", unpackedLabel)});
    expectAgreement(mixed, 4, "packed and unpacked floats");
    EXPECT_EQ(decode(mixed).x, (std::vector<float>{1.5f, 2.0f, 3.0f, 4.0f}));
    // Duplicate keys: the last entry wins entirely.
    const std::string dup = example({entry("image", bytesFeature("\x09")), entry("label", label),
                                     entry("image", bytesFeature(std::string("\xff\x00\x01", 3)))});
    expectAgreement(dup, 0, "duplicate image");
    EXPECT_EQ(decode(dup).x.size(), 3u);
    // Two value fields in one entry merge; switching the oneof's member clears the old list.
    const std::string merged = Wire().bytes(1, "image").bytes(2, bytesFeature("a")).bytes(2, bytesFeature("b")).b;
    expectAgreement(example({merged, entry("label", label)}), 0, "merged bytes lists (2 strings)");
    const std::string switched = Wire()
                                     .bytes(2, bytesFeature("a"))
                                     .bytes(2, Wire().bytes(2, Wire().bytes(1, floatBytes({7.0f})).b).b)
                                     .bytes(2, bytesFeature("bc"))
                                     .bytes(1, "image")
                                     .b;
    expectAgreement(example({switched, entry("label", label)}), 0, "bytes, float, bytes again");
    EXPECT_EQ(decode(example({switched, entry("label", label)})).x.size(), 2u);
    // Unknown fields of every wire type, a group with a nested group, known numbers with other types.
    Wire unknown;
    unknown.tag(9, 0).varint(~uint64_t{0}).fixed32(10, 1).fixed64(11, 2).bytes(12, "zz");
    unknown.tag(13, 3).tag(14, 3).tag(1, 0).varint(1).tag(14, 4).fixed32(2, 5).tag(13, 4);
    unknown.tag(1, 0).varint(3);  // Example.features as a varint: an unknown field
    const std::string withUnknown =
        unknown.b + example({entry("image", bytesFeature(px)) + unknown.b, entry("label", label)}) + unknown.b;
    expectAgreement(withUnknown, 2, "unknown fields");
    // Example.features twice: the maps merge.
    expectAgreement(example({entry("image", bytesFeature(px))}) + example({entry("label", label)}), 2, "two features");
    // Overlong but legal encodings: a 5-byte tag, a 5-byte length.
    expectAgreement(Wire().raw({0x8a, 0x80, 0x80, 0x80, 0x00}).b +
                        example({entry("image", bytesFeature(px)), entry("label", label)}).substr(1),
                    2, "5-byte tag");
    expectAgreement(example({entry("image", bytesFeature(px)), entry("label", label)}) +
                        Wire().tag(7, 2).raw({0x80, 0x80, 0x80, 0x80, 0x00}).b,
                    2, "5-byte length");
}

TEST(Example, WireErrorsProtobufRefuses) {
    const std::string good = example({entry("image", bytesFeature("\x01\x02")), entry("label", int64Feature(1))});
    const std::vector<std::pair<std::string, std::string>> bad = {
        {good.substr(0, good.size() - 1), "length runs past the end of its message at byte 1"},
        {good + Wire().raw({0x00}).b, "zero tag"},
        {good + Wire().tag(5, 4).b, "end-group tag outside a group"},
        {good + Wire().tag(5, 3).b, "unterminated group"},
        {good + Wire().tag(5, 3).tag(6, 4).b, "end-group tag that does not match its group"},
        {good + Wire().tag(0, 5).raw({1, 2, 3, 4}).b, "field number 0"},
        {good + Wire().tag(5, 6).b, "unknown wire type"},
        {good + Wire().tag(5, 0).raw({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}).b,
         "varint longer than 10 bytes"},
        {good + Wire().raw({0x80, 0x80, 0x80, 0x80, 0x80, 0x00}).b, "field tag longer than 5 bytes"},
        {good + Wire().tag(5, 2).raw({0x80, 0x80, 0x80, 0x80, 0x08}).b, "length of 2 GiB or more"},
        {example({entry("image", Wire().bytes(2, Wire().bytes(1, "abc").b).b), entry("label", int64Feature(1))}),
         "packed float list of a length that is not a multiple of 4"},
        {example({entry("image", bytesFeature("a")), entry("label", Wire().bytes(3, Wire().bytes(1, "\x80").b).b)}),
         "truncated varint"},
        {example({entry("\xc0\x80", bytesFeature("a")), entry("image", bytesFeature("a")),
                  entry("label", int64Feature(1))}),
         "feature name is not valid UTF-8"},
    };
    for (const auto& [bytes, what] : bad) {
        expectAgreement(bytes, 0, what);
        const std::string msg = decodeError(bytes);
        EXPECT_EQ(msg.rfind("f: record at byte offset 0: not a valid Example: ", 0), 0u) << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
}


// Feature names (proto3 map keys) must be UTF-8: the decoder refuses exactly what protobuf refuses.
TEST(Example, FeatureNameUtf8LikeProtobuf) {
    const std::string rest =
        Wire().bytes(1, entry("image", bytesFeature("a"))).bytes(1, entry("label", int64Feature(1))).b;
    auto check = [&](const std::string& name) {
        const std::string bytes = Wire().bytes(1, Wire().bytes(1, entry(name, int64Feature(1))).b + rest).b;
        std::string hex;
        for (unsigned char c : name) hex += std::to_string(c) + " ";
        expectAgreement(bytes, 0, "name bytes " + hex);
    };
    for (int a = 0; a < 256; ++a) {
        check(std::string(1, static_cast<char>(a)));
        for (int b = 0; b < 256; ++b) check({static_cast<char>(a), static_cast<char>(b)});
    }
    for (int a = 0xe0; a < 0x100; ++a)
        for (int b = 0; b < 256; ++b)
            for (int c : {0x41, 0x80, 0xbf, 0xc0}) {
                check({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
                for (int d : {0x80, 0xbf, 0x41})
                    check({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c), static_cast<char>(d)});
            }
}

// Groups nested right up to protobuf's recursion limit (100) and one past it, at two depths.
TEST(Example, NestingLimitLikeProtobuf) {
    const std::string body =
        Wire().bytes(1, entry("image", bytesFeature("a"))).bytes(1, entry("label", int64Feature(1))).b;
    for (int levels : {94, 95, 96, 97, 98, 99, 100, 101}) {
        Wire nested;
        for (int i = 0; i < levels; ++i) nested.tag(5, 3);
        for (int i = 0; i < levels; ++i) nested.tag(5, 4);
        expectAgreement(nested.b + Wire().bytes(1, body).b, 0, "top level, " + std::to_string(levels));
        expectAgreement(Wire().bytes(1, nested.b + body).b, 0, "in Features, " + std::to_string(levels));
        const std::string bytesList = Wire().bytes(1, "a").b + nested.b;
        const std::string deep = Wire().bytes(1, entry("image", Wire().bytes(1, bytesList).b)).b;
        expectAgreement(Wire().bytes(1, deep + Wire().bytes(1, entry("label", int64Feature(1))).b).b, 0,
                        "in BytesList, " + std::to_string(levels));
    }
}


// ---- random wire bytes ----------------------------------------------------------------------------

struct Gen {
    std::mt19937 rng;
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
    bool chance(int percent) { return pick(100) < percent; }

    std::string randomBytes(int maxLen) {
        std::string s(static_cast<size_t>(pick(maxLen + 1)), '\0');
        for (char& c : s) c = static_cast<char>(pick(256));
        return s;
    }

    // An unknown field: a number no message here uses, or a used number with a wire type that is not
    // the field's (protobuf keeps both as unknown fields).
    void unknown(Wire& w, int depth, const std::vector<std::pair<uint32_t, int>>& wrongTypes) {
        if (!wrongTypes.empty() && chance(30)) {
            const auto [field, type] = wrongTypes[static_cast<size_t>(pick(static_cast<int>(wrongTypes.size())))];
            if (type == 0) w.tag(field, 0).varint(rng());
            if (type == 1) w.fixed64(field, rng());
            if (type == 5) w.fixed32(field, rng());
            if (type == 3) w.tag(field, 3).tag(field, 4);
            return;
        }
        const uint32_t field = chance(90) ? static_cast<uint32_t>(4 + pick(30)) : 536870911u;
        switch (pick(depth > 0 ? 5 : 4)) {
            case 0: w.tag(field, 0).varint((uint64_t{rng()} << 32) >> pick(64)); break;
            case 1: w.fixed64(field, rng()); break;
            case 2: w.fixed32(field, rng()); break;
            case 3: w.bytes(field, randomBytes(6)); break;
            default:
                w.tag(field, 3);
                for (int i = pick(3); i > 0; --i) unknown(w, depth - 1, {});
                w.tag(field, 4);
        }
    }
    void maybeUnknown(Wire& w, const std::vector<std::pair<uint32_t, int>>& wrongTypes) {
        while (chance(15)) unknown(w, 2, wrongTypes);
    }

    std::string bytesList(int values) {
        Wire w;
        for (int i = 0; i < values; ++i) {
            maybeUnknown(w, {{1, 0}, {1, 5}});
            const std::string run(static_cast<size_t>(pick(12)), static_cast<char>(pick(256)));
            w.bytes(1, chance(50) ? randomBytes(3) : run);
        }
        maybeUnknown(w, {{1, 0}});
        return w.b;
    }
    std::string floatList(int values) {
        Wire w;
        for (int i = 0; i < values;) {
            maybeUnknown(w, {{1, 0}, {1, 1}});
            if (chance(50)) {
                w.fixed32(1, rng());
                ++i;
            } else {
                const int run = 1 + pick(std::min(4, values - i));
                std::string s;
                for (int k = 0; k < run * 4; ++k) s += static_cast<char>(pick(256));
                w.bytes(1, s);
                i += run;
            }
        }
        if (chance(10)) w.bytes(1, "");  // an empty packed run
        return w.b;
    }
    int64_t labelValue() {
        switch (pick(6)) {
            case 0: return -1 - pick(5);
            case 1: return int64_t{INT32_MAX} + pick(2);
            case 2: return static_cast<int64_t>((uint64_t{rng()} << 32) | rng());
            default: return pick(10);
        }
    }
    std::string int64List(int values) {
        Wire w;
        for (int i = 0; i < values;) {
            maybeUnknown(w, {{1, 5}, {1, 1}});
            if (chance(50)) {
                w.tag(1, 0).varint(static_cast<uint64_t>(labelValue()));
                ++i;
            } else {
                const int run = 1 + pick(std::min(3, values - i));
                Wire packed;
                for (int k = 0; k < run; ++k) packed.varint(static_cast<uint64_t>(labelValue()));
                w.bytes(1, packed.b);
                i += run;
            }
        }
        return w.b;
    }
    // kind 1 bytes, 2 float, 3 int64.
    std::string list(int kind, int values) {
        return kind == 1 ? bytesList(values) : kind == 2 ? floatList(values) : int64List(values);
    }
    std::string feature(int kind, int values) {
        Wire w;
        if (chance(10)) w.bytes(static_cast<uint32_t>(1 + pick(3)), list(1 + pick(3), pick(3)));  // replaced or merged
        maybeUnknown(w, {{1, 0}, {2, 5}, {3, 1}});
        if (kind > 0) {
            if (chance(15)) {  // the same list split in two occurrences: they merge
                const int first = pick(values + 1);
                w.bytes(static_cast<uint32_t>(kind), list(kind, first));
                maybeUnknown(w, {});
                w.bytes(static_cast<uint32_t>(kind), list(kind, values - first));
            } else {
                w.bytes(static_cast<uint32_t>(kind), list(kind, values));
            }
        }
        maybeUnknown(w, {{1, 0}});
        return w.b;
    }
    std::string entryOf(const std::string& key, const std::string& value) {
        Wire w;
        maybeUnknown(w, {{1, 0}, {2, 5}});
        if (chance(10)) w.bytes(1, "other");  // a key field that a later one overrides
        if (chance(20)) {
            w.bytes(2, value);
            w.bytes(1, key);
        } else {
            w.bytes(1, key);
            w.bytes(2, value);
        }
        maybeUnknown(w, {{2, 0}});
        return w.b;
    }

    // An Example around an image of `pixels` values and a label, both mostly well formed.
    std::string example(size_t pixels) {
        std::vector<std::string> entries;
        const int imageKind = chance(85) ? 1 + pick(2) : pick(4);  // mostly bytes or floats
        const int imageValues = imageKind == 1 ? (chance(90) ? 1 : pick(3)) : static_cast<int>(pixels);
        std::string image = feature(imageKind, imageValues);
        if (imageKind == 1 && imageValues == 1 && chance(80)) {
            // A real pixel string of the wanted size, in a well-formed list.
            std::string px(pixels, '\0');
            for (char& c : px) c = static_cast<char>(pick(256));
            image = Wire().bytes(1, Wire().bytes(1, px).b).b;
        }
        if (chance(95)) entries.push_back(entryOf("image", image));
        const int labelKind = chance(90) ? 3 : pick(4);
        if (chance(95)) entries.push_back(entryOf("label", feature(labelKind, chance(90) ? 1 : pick(3))));
        for (int i = pick(3); i > 0; --i) {
            static const char* names[] = {"height", "width", "channels", "id", "", "imag", "labels"};
            entries.push_back(entryOf(names[pick(7)], feature(pick(4), pick(3))));
        }
        if (chance(10)) entries.push_back(entryOf(chance(50) ? "image" : "label", feature(pick(4), pick(3))));
        std::shuffle(entries.begin(), entries.end(), rng);
        Wire out;
        maybeUnknown(out, {{1, 0}, {1, 5}, {1, 3}});
        size_t at = 0;
        while (at < entries.size() || out.b.empty()) {
            Wire features;
            const int left = static_cast<int>(entries.size() - at);
            const size_t take = static_cast<size_t>(chance(80) ? left : pick(left + 1));
            for (size_t i = 0; i < take; ++i) {
                maybeUnknown(features, {{1, 0}, {1, 5}});
                features.bytes(1, entries[at++]);
            }
            out.bytes(1, features.b);
            maybeUnknown(out, {});
        }
        return out.b;
    }
};


TEST(Example, AgreesWithProtobufOnRandomExamples) {
    Gen gen{std::mt19937(20240611)};
    int decoded = 0;
    for (int i = 0; i < 4000; ++i) {
        const size_t pixels = static_cast<size_t>(gen.chance(50) ? 784 : gen.pick(6));
        const std::string bytes = gen.example(pixels);
        const size_t expected = gen.chance(80) ? pixels : 0;
        expectAgreement(bytes, expected, "random example " + std::to_string(i));
        if (oracle::decodeWithProtobuf(u8(bytes), bytes.size(), expected).ok) ++decoded;
        // Cut short or with one byte changed: still the same verdict as protobuf.
        if (!bytes.empty()) {
            expectAgreement(bytes.substr(0, static_cast<size_t>(gen.pick(static_cast<int>(bytes.size())))), expected,
                            "cut example " + std::to_string(i));
            std::string flipped = bytes;
            const size_t at = static_cast<size_t>(gen.pick(static_cast<int>(bytes.size())));
            flipped[at] ^= static_cast<char>(1 << gen.pick(8));
            expectAgreement(flipped, expected, "flipped example " + std::to_string(i));
        }
        if (HasFatalFailure()) return;
    }
    EXPECT_GT(decoded, 1000);  // the generator must produce enough valid examples to mean something
}


}  // namespace
}  // namespace trainbench::engine
