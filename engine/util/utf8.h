#pragma once
// Reading UTF-8 one sequence at a time, as RFC 3629 defines it: no overlong forms, no surrogates,
// nothing past U+10FFFF. For writers that must emit valid Unicode text (JSON traces, YAML manifests).
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trainbench::engine {

struct Utf8Sequence {
    size_t bytes = 1;          // valid: its length (1 to 4); not valid: the longest start of one (>= 1)
    bool valid = false;
    uint32_t code_point = 0;   // when valid
};

// The sequence at s[i] (i < s.size()). An invalid one (truncated, overlong, a surrogate, above
// U+10FFFF, a stray continuation byte) spans the bytes a reader replaces with one U+FFFD, as
// browsers do.
inline Utf8Sequence utf8SequenceAt(std::string_view s, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return {1, true, c};
    size_t n = 0;
    uint32_t cp = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0Fu;
        if (c == 0xE0) lo = 0xA0;  // overlong
        if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07u;
        if (c == 0xF0) lo = 0x90;  // overlong
        if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return {1, false, 0};
    }
    for (size_t k = 1; k < n; ++k) {
        const bool ok = i + k < s.size() && byte(i + k) >= (k == 1 ? lo : 0x80) && byte(i + k) <= (k == 1 ? hi : 0xBF);
        if (!ok) return {k, false, 0};
        cp = (cp << 6) | (byte(i + k) & 0x3Fu);
    }
    return {n, true, cp};
}

}  // namespace trainbench::engine
