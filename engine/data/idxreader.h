#pragma once
// Reads IDX files (the MNIST container format), plain or gzip-compressed, into memory in one pass.
// Every malformed input raises DataError naming the file and, where it helps, the byte offset.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::engine {

// IDX element type codes (the third header byte).
enum IdxType : uint8_t {
    kIdxU8 = 0x08,
    kIdxI8 = 0x09,
    kIdxI16 = 0x0B,
    kIdxI32 = 0x0C,
    kIdxF32 = 0x0D,
    kIdxF64 = 0x0E,
};

// An IDX file's contents. `data` holds the elements exactly as stored: for types wider than a
// byte that is big-endian, so callers convert only what they use (the datasets we load are u8).
struct IdxArray {
    std::vector<int64_t> dims;  // 1 to 4 sizes, outermost first
    uint8_t type = kIdxU8;      // one of IdxType
    std::vector<uint8_t> data;  // product(dims) * idxElementSize(type) bytes
};

// Bytes per element of an IDX type code, or 0 for a code the format does not define.
size_t idxElementSize(uint8_t type);
// "u8", "i8", "i16", "i32", "f32", "f64", or "unknown".
const char* idxTypeName(uint8_t type);
// "60000x28x28": dims as a message or a log shows them.
std::string idxDimsString(const std::vector<int64_t>& dims);

// Reads `path`. A gzip stream is recognised by its magic bytes (1f 8b), not by the file name.
// Throws DataError on a missing or unreadable file, a bad header, a data size that disagrees
// with the header, or a truncated or corrupt gzip stream.
IdxArray readIdx(const std::string& path);
// The same from a file's bytes already in memory (read through a Storage, say); `path` names the
// file in messages.
IdxArray readIdx(const std::vector<uint8_t>& bytes, const std::string& path);

}  // namespace trainbench::engine
