// SHA-256 and HMAC-SHA256 against their standards' known answers (FIPS 180-2 appendix B, RFC 4231
// section 4), and the same digest whatever the pieces a message is fed in.
#include "engine/util/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace trainbench::engine {
namespace {

std::string hex(const Sha256Digest& d) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (uint8_t b : d) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

TEST(Sha256, KnownAnswers) {
    EXPECT_EQ(hex(Sha256::of("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hex(Sha256::of("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex(Sha256::of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(hex(Sha256::of(std::string(1'000'000, 'a'))),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // The padding's edge cases: 55 bytes fit one block with the length, 64 need a second.
    EXPECT_EQ(hex(Sha256::of(std::string(55, 'a'))), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    EXPECT_EQ(hex(Sha256::of(std::string(64, 'a'))), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, TheSameDigestWhateverThePieces) {
    std::string message;
    for (int i = 0; i < 300; ++i) message += static_cast<char>(i * 7 + 3);
    const Sha256Digest whole = Sha256::of(message);
    for (size_t piece : {1u, 3u, 63u, 64u, 65u, 200u}) {
        Sha256 h;
        for (size_t at = 0; at < message.size(); at += piece) h.update(std::string_view(message).substr(at, piece));
        EXPECT_EQ(h.finish(), whole) << "pieces of " << piece;
    }
}

TEST(HmacSha256, Rfc4231TestCases) {
    EXPECT_EQ(hex(hmacSha256(std::string(20, '\x0b'), "Hi There")),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    EXPECT_EQ(hex(hmacSha256("Jefe", "what do ya want for nothing?")),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    EXPECT_EQ(hex(hmacSha256(std::string(20, '\xaa'), std::string(50, '\xdd'))),
              "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    // A key longer than a block is hashed first.
    EXPECT_EQ(hex(hmacSha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    EXPECT_EQ(hex(hmacSha256(std::string(131, '\xaa'),
                             "This is a test using a larger than block-size key and a larger than block-size data. The "
                             "key needs to be hashed before being used by the HMAC algorithm.")),
              "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, SameDigestComparesEveryByte) {
    const Sha256Digest a = Sha256::of("a");
    Sha256Digest b = a;
    EXPECT_TRUE(sameDigest(a, b));
    b[31] ^= 1;
    EXPECT_FALSE(sameDigest(a, b));
    b = a;
    b[0] ^= 0x80;
    EXPECT_FALSE(sameDigest(a, b));
}

}  // namespace
}  // namespace trainbench::engine
