#pragma once
// CRC-32C (Castagnoli), the checksum of TFRecord framing and of checkpoints. Uses the CPU's crc32
// instruction (SSE4.2) when it has one, a table-driven version otherwise; both give the same values.
#include <cstddef>
#include <cstdint>

namespace trainbench::engine {

// CRC-32C of n bytes, continuing from `crc` (the value returned for the bytes before; 0 to start).
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);
// The portable implementation, for tests and for CPUs without SSE4.2.
uint32_t crc32cPortable(const void* data, size_t n, uint32_t crc = 0);
// True when crc32c() uses the hardware instruction on this CPU.
bool crc32cHardware();

// TFRecord stores masked CRCs: rotate right by 15 bits and add 0xa282ead8.
inline uint32_t maskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t unmaskCrc(uint32_t masked) {
    const uint32_t rot = masked - 0xa282ead8u;
    return (rot >> 17) | (rot << 15);
}

}  // namespace trainbench::engine
