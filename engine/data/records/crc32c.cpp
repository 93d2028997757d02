#include "engine/data/records/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define TB_CRC32C_X86 1
#endif

namespace trainbench::engine {
namespace {

// The Castagnoli polynomial, bit-reversed (the CRC works on least significant bits first).
constexpr uint32_t kPoly = 0x82f63b78u;

// Slicing-by-8 tables: kSlice[0] is the classic byte table; kSlice[k][b] is the CRC contribution of
// byte b followed by k zero bytes, so eight bytes are folded with eight independent lookups.
constexpr std::array<std::array<uint32_t, 256>, 8> makeSliceTables() {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t b = 0; b < 256; ++b) {
        uint32_t c = b;
        for (int i = 0; i < 8; ++i) c = (c & 1u) ? (c >> 1) ^ kPoly : c >> 1;
        t[0][b] = c;
    }
    for (size_t k = 1; k < 8; ++k)
        for (size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xffu];
    return t;
}
constexpr auto kSlice = makeSliceTables();

inline uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;  // little-endian, as the CRC consumes bytes in order (x86 only, like the tables' use)
}

uint32_t portable(const uint8_t* p, size_t n, uint32_t c) {
    while (n >= 8) {
        const uint64_t v = load64(p) ^ c;
        c = kSlice[7][v & 0xff] ^ kSlice[6][(v >> 8) & 0xff] ^ kSlice[5][(v >> 16) & 0xff] ^
            kSlice[4][(v >> 24) & 0xff] ^ kSlice[3][(v >> 32) & 0xff] ^ kSlice[2][(v >> 40) & 0xff] ^
            kSlice[1][(v >> 48) & 0xff] ^ kSlice[0][v >> 56];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) c = (c >> 8) ^ kSlice[0][(c ^ *p++) & 0xff];
    return c;
}

#ifdef TB_CRC32C_X86

// ---- Combining interleaved streams --------------------------------------------------------------
// The crc32 instruction has a latency of 3 cycles and a throughput of 1 per cycle, so one dependency
// chain runs at a third of the possible speed. Three chains over three adjacent blocks A, B, C of
// `len` bytes each (B and C started from a zero register) are joined by the linearity of the CRC:
//   reg(A B) = reg(A) * x^(8 len) mod P  xor  reg(B)
// The multiplication by the constant x^(8 len) is a linear map of the 32-bit register, applied with
// four 256-entry tables, one per register byte.

// a * b mod P in the bit-reversed representation (bit 31 holds x^0).
constexpr uint32_t mulModP(uint32_t a, uint32_t b) {
    uint32_t product = 0;
    for (int i = 0; i < 32; ++i) {
        if (a & (0x80000000u >> i)) product ^= b;
        b = (b & 1u) ? (b >> 1) ^ kPoly : b >> 1;  // b *= x
    }
    return product;
}

// x^(8 n) mod P: the operator "append n zero bytes" of the raw CRC register.
constexpr uint32_t xPow8n(size_t n) {
    uint32_t result = 0x80000000u;  // x^0
    uint32_t square = 0x00800000u;  // x^8
    for (; n > 0; n >>= 1) {
        if (n & 1u) result = mulModP(result, square);
        square = mulModP(square, square);
    }
    return result;
}

using ShiftTable = std::array<std::array<uint32_t, 256>, 4>;

constexpr ShiftTable makeShiftTable(size_t bytes) {
    const uint32_t op = xPow8n(bytes);
    std::array<uint32_t, 32> basis{};  // the operator applied to each single register bit
    for (int bit = 0; bit < 32; ++bit) basis[bit] = mulModP(op, 1u << bit);
    ShiftTable t{};
    for (int k = 0; k < 4; ++k)
        for (uint32_t b = 0; b < 256; ++b) {
            uint32_t v = 0;
            for (int bit = 0; bit < 8; ++bit)
                if (b & (1u << bit)) v ^= basis[8 * k + bit];
            t[k][b] = v;
        }
    return t;
}

// Block lengths per stream: long blocks for big buffers, short ones so a ~1 KB record still gets
// three chains. Multiples of 8 (the instruction eats 8 bytes).
constexpr size_t kLong = 8192;
constexpr size_t kShort = 256;
constexpr ShiftTable kShiftLong = makeShiftTable(kLong);
constexpr ShiftTable kShiftShort = makeShiftTable(kShort);

inline uint32_t shift(const ShiftTable& t, uint32_t c) {
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

template <size_t kLen>
__attribute__((target("sse4.2"), always_inline)) inline const uint8_t* threeWay(const uint8_t* p, uint64_t& c0,
                                                                              const ShiftTable& t) {
    uint64_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < kLen; i += 8) {
        c0 = _mm_crc32_u64(c0, load64(p + i));
        c1 = _mm_crc32_u64(c1, load64(p + kLen + i));
        c2 = _mm_crc32_u64(c2, load64(p + 2 * kLen + i));
    }
    c0 = shift(t, static_cast<uint32_t>(c0)) ^ c1;
    c0 = shift(t, static_cast<uint32_t>(c0)) ^ c2;
    return p + 3 * kLen;
}

__attribute__((target("sse4.2"))) uint32_t hardware(const uint8_t* p, size_t n, uint32_t c32) {
    uint64_t c = c32;
    for (; n >= 3 * kLong; n -= 3 * kLong) p = threeWay<kLong>(p, c, kShiftLong);
    for (; n >= 3 * kShort; n -= 3 * kShort) p = threeWay<kShort>(p, c, kShiftShort);
    for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, load64(p));
    uint32_t c8 = static_cast<uint32_t>(c);
    for (; n > 0; --n) c8 = _mm_crc32_u8(c8, *p++);
    return c8;
}

bool detectHardware() { return __builtin_cpu_supports("sse4.2"); }

#else

uint32_t hardware(const uint8_t* p, size_t n, uint32_t c) { return portable(p, n, c); }
bool detectHardware() { return false; }

#endif

// Read once at load time. A call from another static initialiser that runs earlier sees false (static
// storage starts zeroed) and takes the portable path, which gives the same values.
const bool kHardware = detectHardware();

}  // namespace

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
    const auto* p = static_cast<const uint8_t*>(data);
    return ~(kHardware ? hardware(p, n, ~crc) : portable(p, n, ~crc));
}

uint32_t crc32cPortable(const void* data, size_t n, uint32_t crc) {
    return ~portable(static_cast<const uint8_t*>(data), n, ~crc);
}

bool crc32cHardware() { return kHardware; }

}  // namespace trainbench::engine
