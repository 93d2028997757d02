#pragma once
// The per-job random token every connection of a multi-process job presents.
#include <string>

namespace trainbench::engine {

// Compares without an early exit, so the time taken does not tell how much of a guess was right.
inline bool sameToken(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

}  // namespace trainbench::engine
