#pragma once
// Protobuf wire bytes written by hand for the Example tests, and the check that decodeExample and
// protobuf's generated parser agree on some bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "engine/data/records/example.h"
#include "engine/util/errors.h"
#include "exampleoracle.h"
#include "recordtestutil.h"

namespace trainbench::engine::exampletest {

using recordtest::errorOf;

// Protobuf wire format, written by hand (developers.google.com/protocol-buffers/docs/encoding).
struct Wire {
    std::string b;
    Wire& raw(std::initializer_list<int> bytes) {
        for (int v : bytes) b += static_cast<char>(v);
        return *this;
    }
    Wire& varint(uint64_t v) {
        for (; v >= 0x80; v >>= 7) b += static_cast<char>(v | 0x80);
        b += static_cast<char>(v);
        return *this;
    }
    Wire& tag(uint32_t field, int type) { return varint(uint64_t{field} << 3 | static_cast<uint32_t>(type)); }
    Wire& bytes(uint32_t field, const std::string& s) {
        tag(field, 2).varint(s.size());
        b += s;
        return *this;
    }
    Wire& fixed32(uint32_t field, uint32_t v) {
        tag(field, 5);
        for (int i = 0; i < 4; ++i) b += static_cast<char>(v >> (8 * i));
        return *this;
    }
    Wire& fixed64(uint32_t field, uint64_t v) {
        tag(field, 1);
        for (int i = 0; i < 8; ++i) b += static_cast<char>(v >> (8 * i));
        return *this;
    }
};

inline std::string floatBytes(const std::vector<float>& v) {
    std::string s(v.size() * 4, '\0');
    if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
    return s;
}

inline std::string entry(const std::string& key, const std::string& feature) {
    return Wire().bytes(1, key).bytes(2, feature).b;
}
inline std::string bytesFeature(const std::string& px) { return Wire().bytes(1, Wire().bytes(1, px).b).b; }
inline std::string int64Feature(int64_t v) {
    return Wire().bytes(3, Wire().bytes(1, Wire().varint(static_cast<uint64_t>(v)).b).b).b;
}
inline std::string example(const std::vector<std::string>& entries) {
    Wire features;
    for (const std::string& e : entries) features.bytes(1, e);
    return Wire().bytes(1, features.b).b;
}

inline const uint8_t* u8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

inline Sample decode(const std::string& bytes, size_t expected = 0) {
    Sample s;
    decodeExample(u8(bytes), bytes.size(), expected, s, "f: record at byte offset 0");
    return s;
}

inline std::string decodeError(const std::string& bytes, size_t expected = 0) {
    return errorOf([&] { decode(bytes, expected); });
}

// Decoder and protobuf agree: both refuse, or both give the same floats and label.
inline void expectAgreement(const std::string& bytes, size_t expected, const std::string& what) {
    const oracle::Decoded want = oracle::decodeWithProtobuf(u8(bytes), bytes.size(), expected);
    Sample got;
    bool ok = true;
    std::string error;
    try {
        decodeExample(u8(bytes), bytes.size(), expected, got, "where");
    } catch (const DataError& e) {
        ok = false;
        error = e.what();
    }
    ASSERT_EQ(ok, want.ok) << what << (ok ? "" : ": " + error);
    if (!ok) {
        EXPECT_EQ(error.rfind("where: ", 0), 0u) << error;
        return;
    }
    ASSERT_EQ(got.x.size(), want.x.size()) << what;
    if (!want.x.empty()) {
        EXPECT_EQ(std::memcmp(got.x.data(), want.x.data(), want.x.size() * 4), 0) << what;
    }
    EXPECT_EQ(got.label, want.label) << what;
}

}  // namespace trainbench::engine::exampletest
