// CRC-32C: known answers (RFC 3720 B.4 and the usual check value), the hardware path against the
// portable one on every short length and alignment, continuation, and TFRecord's masking.
#include "engine/data/records/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace trainbench::engine {
namespace {

// Bit at a time, straight from the definition: the reference the fast versions are held to.
uint32_t crcBitwise(const uint8_t* p, size_t n, uint32_t crc = 0) {
    crc = ~crc;
    for (size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
    std::vector<uint8_t> b(n);
    for (auto& v : b) {
        seed = seed * 1664525u + 1013904223u;
        v = static_cast<uint8_t>(seed >> 24);
    }
    return b;
}

TEST(Crc32c, KnownAnswers) {
    const std::string check = "123456789";
    std::vector<uint8_t> zeros(32, 0), ones(32, 0xff), ascending(32), descending(32);
    for (int i = 0; i < 32; ++i) {
        ascending[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
        descending[static_cast<size_t>(i)] = static_cast<uint8_t>(31 - i);
    }
    for (auto* fn : {&crc32c, &crc32cPortable}) {
        EXPECT_EQ(fn(check.data(), check.size(), 0), 0xE3069283u);
        EXPECT_EQ(fn(zeros.data(), zeros.size(), 0), 0x8A9136AAu);
        EXPECT_EQ(fn(ones.data(), ones.size(), 0), 0x62A8AB43u);
        EXPECT_EQ(fn(ascending.data(), ascending.size(), 0), 0x46DD794Eu);
        EXPECT_EQ(fn(descending.data(), descending.size(), 0), 0x113FDB5Cu);
        EXPECT_EQ(fn(nullptr, 0, 0), 0u);
    }
    EXPECT_EQ(crcBitwise(reinterpret_cast<const uint8_t*>(check.data()), check.size()), 0xE3069283u);
}

TEST(Crc32c, ReportsWhichPathItUses) {
#if defined(__x86_64__)
    EXPECT_EQ(crc32cHardware(), __builtin_cpu_supports("sse4.2") != 0);
#else
    EXPECT_FALSE(crc32cHardware());
#endif
}

TEST(Crc32c, HardwareAgreesWithPortableOnEveryShortLengthAndAlignment) {
    const std::vector<uint8_t> buf = randomBytes(300 + 16, 7);
    for (size_t offset = 0; offset < 16; ++offset)
        for (size_t n = 0; n + offset <= buf.size() && n <= 300; ++n) {
            const uint8_t* p = buf.data() + offset;
            const uint32_t ref = crcBitwise(p, n);
            ASSERT_EQ(crc32c(p, n), ref) << "length " << n << ", offset " << offset;
            ASSERT_EQ(crc32cPortable(p, n), ref) << "length " << n << ", offset " << offset;
        }
}

// Lengths around the three-stream block sizes (3 x 256 and 3 x 8192 bytes) and well past them.
TEST(Crc32c, HardwareAgreesWithPortableOnLongBuffers) {
    const std::vector<uint8_t> buf = randomBytes(200000, 11);
    for (size_t n : {767, 768, 769, 1535, 1536, 24575, 24576, 24577, 49152 + 768 + 7, 100003, 200000 - 3}) {
        for (size_t offset : {0, 1, 3}) {
            const uint8_t* p = buf.data() + offset;
            EXPECT_EQ(crc32c(p, n), crcBitwise(p, n)) << "length " << n << ", offset " << offset;
            EXPECT_EQ(crc32cPortable(p, n), crcBitwise(p, n)) << "length " << n << ", offset " << offset;
        }
    }
}

TEST(Crc32c, ExtendsAcrossSplits) {
    const std::vector<uint8_t> buf = randomBytes(30000, 3);
    const uint32_t whole = crc32c(buf.data(), buf.size());
    for (size_t split : {0, 1, 7, 8, 9, 255, 256, 1000, 8192, 24576, 29999, 30000}) {
        const uint32_t a = crc32c(buf.data(), split);
        EXPECT_EQ(crc32c(buf.data() + split, buf.size() - split, a), whole) << split;
        const uint32_t pa = crc32cPortable(buf.data(), split);
        EXPECT_EQ(crc32cPortable(buf.data() + split, buf.size() - split, pa), whole) << split;
        // The two implementations continue each other's values.
        EXPECT_EQ(crc32c(buf.data() + split, buf.size() - split, pa), whole) << split;
    }
}

TEST(Crc32c, MaskRoundTripsAndMatchesTheFormula) {
    for (uint32_t v : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x12345678u}) {
        EXPECT_EQ(unmaskCrc(maskCrc(v)), v);
        EXPECT_EQ(maskCrc(v), ((v >> 15) | (v << 17)) + 0xa282ead8u);
    }
}

}  // namespace
}  // namespace trainbench::engine
