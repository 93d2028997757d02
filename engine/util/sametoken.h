#pragma once
// Compares a job token a peer presented with the job's own, for the servers of a multi-process job.
#include <string_view>

namespace trainbench::engine {

// True when the two are equal. No early exit: the time taken does not tell how much of a guess was right.
inline bool sameToken(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

}  // namespace trainbench::engine
