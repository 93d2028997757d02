#pragma once
// Helpers of the record-file tests: a fresh temp dir per test, whole-file I/O, TFRecord frames built
// from the format's definition (with a bit-at-a-time CRC, independent of the library's), zlib.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/util/errors.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine::recordtest {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

inline uint32_t crcBitwise(const uint8_t* p, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

inline uint32_t maskedBitwise(const uint8_t* p, size_t n) {
    const uint32_t c = crcBitwise(p, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

inline void putLe(Bytes& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// One TFRecord: u64 length, masked CRC of the length, data, masked CRC of the data.
inline Bytes frame(const std::string& data) {
    Bytes out;
    putLe(out, data.size(), 8);
    putLe(out, maskedBitwise(out.data(), 8), 4);
    out.insert(out.end(), data.begin(), data.end());
    putLe(out, maskedBitwise(reinterpret_cast<const uint8_t*>(data.data()), data.size()), 4);
    return out;
}

// A header claiming `length` bytes, with a valid length CRC.
inline Bytes headerOnly(uint64_t length) {
    Bytes out;
    putLe(out, length, 8);
    putLe(out, maskedBitwise(out.data(), 8), 4);
    return out;
}

inline Bytes zlibCompress(const Bytes& in, int level = Z_DEFAULT_COMPRESSION) {
    uLongf n = compressBound(static_cast<uLong>(in.size()));
    Bytes out(n);
    EXPECT_EQ(compress2(out.data(), &n, in.data(), static_cast<uLong>(in.size()), level), Z_OK);
    out.resize(n);
    return out;
}

inline Bytes zlibInflate(const Bytes& in, size_t expected) {
    Bytes out(expected + 1);
    uLongf n = static_cast<uLongf>(out.size());
    EXPECT_EQ(uncompress(out.data(), &n, in.data(), static_cast<uLong>(in.size())), Z_OK);
    out.resize(n);
    return out;
}

inline void writeFile(const fs::path& p, const Bytes& b) {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    ASSERT_TRUE(f.good()) << p;
}

inline Bytes readFile(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

using test::errorOf;
using test::TempDirTest;

}  // namespace trainbench::engine::recordtest
