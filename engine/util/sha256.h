#pragma once
// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the proofs the ranks of a job exchange with
// the job token as key (engine/collective/gloohandshake.h). Small and dependency-free: the engine links
// no crypto library, and this is the only primitive it needs.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trainbench::engine {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t size);
    void update(std::string_view s) { update(s.data(), s.size()); }
    // The digest of everything given so far; the object must not be used afterwards.
    Sha256Digest finish();

    static Sha256Digest of(std::string_view s) {
        Sha256 h;
        h.update(s);
        return h.finish();
    }

private:
    void block(const uint8_t* p);

    std::array<uint32_t, 8> state_;
    std::array<uint8_t, 64> buffer_{};
    size_t buffered_ = 0;
    uint64_t total_ = 0;  // bytes
};

Sha256Digest hmacSha256(std::string_view key, std::string_view message);

// Equal digests, compared without an early exit.
bool sameDigest(const Sha256Digest& a, const Sha256Digest& b);

}  // namespace trainbench::engine
