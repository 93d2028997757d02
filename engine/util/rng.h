#pragma once
// Deterministic random numbers that are the same on every platform and standard library
// (std::uniform_*_distribution is implementation-defined, so it is not used for anything recorded).
#include <cstdint>

namespace trainbench::engine {

// SplitMix64: a tiny, well-mixed generator; also used to derive independent seeds.
class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}

    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1) with 24 bits of precision.
    float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
    float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
    // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-32 for our sizes).
    uint64_t below(uint64_t n) {
        __extension__ using u128 = unsigned __int128;  // GCC/Clang extension, fine under -Wpedantic
        return static_cast<uint64_t>((static_cast<u128>(next()) * n) >> 64);
    }

private:
    uint64_t state_;
};

// A seed for a named purpose ("init", "shuffle", "dropout") and an index (epoch, layer, step),
// so streams do not overlap and do not depend on the order they are drawn in.
inline uint64_t deriveSeed(uint64_t seed, uint64_t purpose, uint64_t index) {
    Rng r(seed ^ (purpose * 0xD1B54A32D192ED03ull) ^ (index * 0x8CB92BA72F3D8DD7ull));
    r.next();
    return r.next();
}

enum SeedPurpose : uint64_t { kSeedInit = 1, kSeedShuffle = 2, kSeedDropout = 3, kSeedFiles = 4, kSeedShuffleBuffer = 5, kSeedReplica = 6,
                          kSeedSubset = 7 };

}  // namespace trainbench::engine
