// The framed protocol of parameter servers and workers: frames survive any split of the stream;
// truncated, oversized, wrong-version, foreign and unknown frames are refused with what and where;
// payload fields are bounds-checked.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/net/framing.h"
#include "engine/util/errors.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine::framing {
namespace {

using test::errorOf;

std::vector<Frame> decodeInPieces(const std::string& stream, size_t piece) {
    FrameDecoder d;
    std::vector<Frame> out;
    for (size_t at = 0; at < stream.size(); at += piece) {
        const size_t n = std::min(piece, stream.size() - at);
        d.feed(reinterpret_cast<const uint8_t*>(stream.data() + at), n, out);
    }
    d.finish();
    EXPECT_EQ(d.offset(), stream.size());
    return out;
}

TEST(Framing, HeaderLayoutIsTheDocumentedOne) {
    const std::string f = encode(5, "abc");
    const std::string expected("\x54\x42\x50\x53\x01\x00\x05\x00\x03\x00\x00\x00\x00\x00\x00\x00" "abc", 19);
    EXPECT_EQ(f, expected);
}

TEST(Framing, FramesSurviveAnySplitOfTheStream) {
    std::string stream;
    std::vector<std::string> payloads = {"", "x", std::string(1000, 'p'), std::string(70000, '\x01')};
    for (size_t i = 0; i < payloads.size(); ++i) stream += encode(static_cast<uint16_t>(i + 1), payloads[i]);
    for (size_t piece : {size_t{1}, size_t{3}, size_t{16}, size_t{17}, size_t{4096}, stream.size()}) {
        const auto frames = decodeInPieces(stream, piece);
        ASSERT_EQ(frames.size(), payloads.size()) << "pieces of " << piece;
        for (size_t i = 0; i < frames.size(); ++i) {
            EXPECT_EQ(frames[i].type, i + 1);
            EXPECT_EQ(std::string(frames[i].payload.begin(), frames[i].payload.end()), payloads[i]);
        }
    }
}

TEST(Framing, BadFramesAreRefusedNamingWhatAndWhere) {
    const std::string good = encode(2, "hello");
    auto feed = [](std::string stream, uint64_t cap = kDefaultMaxPayload) {
        return errorOf<ProtocolError>([&] {
            FrameDecoder d(cap);
            std::vector<Frame> out;
            d.feed(reinterpret_cast<const uint8_t*>(stream.data()), stream.size(), out);
            d.finish();
        });
    };
    std::string foreign = good + "GET / HTTP/1.1\r\n\r\n";
    EXPECT_EQ(feed(foreign), "bad magic 0x20544547 at byte offset 21 (expected 0x53504254: not a trainbench message)");
    std::string version = good + encode(3, "");
    version[21 + 4] = 2;
    EXPECT_EQ(feed(version), "protocol version 2 at byte offset 21 (this build speaks version 1)");
    std::string unknown = encode(65, "");
    EXPECT_EQ(feed(unknown), "unknown message type 65 at byte offset 0");
    EXPECT_EQ(feed(encode(0, "")), "unknown message type 0 at byte offset 0");
    EXPECT_EQ(feed(good + encode(4, std::string(100, 'x')), 64),
              "message of type 4 at byte offset 21 says 100 payload bytes, more than the 64 allowed");
    // A length near 2^64: refused from the header alone, nothing allocated.
    std::string huge = encode(4, "");
    for (int i = 8; i < 16; ++i) huge[static_cast<size_t>(i)] = '\xff';
    EXPECT_NE(feed(huge).find("says 18446744073709551615 payload bytes"), std::string::npos);
    EXPECT_EQ(feed(good + good.substr(0, 20)),
              "truncated frame at byte offset 21: its header says 5 payload bytes, the stream ended after 4");
    EXPECT_EQ(feed(good + good.substr(0, 7)),
              "truncated frame at byte offset 21: the stream ended 7 bytes into its 16-byte header");
    // After an error nothing more is read.
    FrameDecoder d;
    std::vector<Frame> out;
    EXPECT_THROW(d.feed(reinterpret_cast<const uint8_t*>(foreign.data()), foreign.size(), out), ProtocolError);
    EXPECT_NE(errorOf<ProtocolError>([&] { d.feed(reinterpret_cast<const uint8_t*>(good.data()), good.size(), out); })
                  .find("broke the protocol before"),
              std::string::npos);
}

TEST(Framing, PayloadFieldsRoundTripAndAreBoundsChecked) {
    const std::vector<float> grads = {1.5f, -0.25f, 3e-8f};
    PayloadWriter w;
    w.u32(7).u64(1ull << 40).f64(0.1).str("token").floats(grads.data(), grads.size());
    Frame f{5, std::vector<uint8_t>(w.data().begin(), w.data().end())};
    PayloadReader r(f, "Push");
    EXPECT_EQ(r.u32("shard"), 7u);
    EXPECT_EQ(r.u64("version"), 1ull << 40);
    EXPECT_EQ(r.f64("loss"), 0.1);
    EXPECT_EQ(r.str("token", 64), "token");
    std::vector<float> back;
    r.floats("grads", back, 3);
    EXPECT_EQ(back, grads);
    r.end();

    PayloadReader shortOne(f, "Push");
    shortOne.u32("shard");
    shortOne.u64("version");
    shortOne.f64("loss");
    EXPECT_EQ(errorOf<ProtocolError>([&] { shortOne.str("token", 3); }), "Push message: field 'token' is 5 bytes, more than 3");
    PayloadReader wrongCount(f, "Push");
    wrongCount.u32("shard");
    wrongCount.u64("version");
    wrongCount.f64("loss");
    wrongCount.str("token", 64);
    EXPECT_EQ(errorOf<ProtocolError>([&] { wrongCount.floats("grads", back, 4); }), "Push message: field 'grads' has 3 values, 4 expected");
    Frame lying{5, {}};
    PayloadWriter lie;
    lie.u64(1ull << 60);  // says a billion billion floats, holds none
    lying.payload.assign(lie.data().begin(), lie.data().end());
    PayloadReader lr(lying, "Params");
    EXPECT_EQ(errorOf<ProtocolError>([&] { lr.floats("values", back); }), "Params message: field 'values' says 1152921504606846976 floats, 0 bytes are left");
    Frame extra{1, {1, 2, 3, 4, 5}};
    PayloadReader er(extra, "Pull");
    er.u32("shard");
    EXPECT_EQ(errorOf<ProtocolError>([&] { er.end(); }), "Pull message: 1 unexpected bytes after its fields");
    Frame empty{1, {}};
    PayloadReader emptyReader(empty, "Pull");
    EXPECT_EQ(errorOf<ProtocolError>([&] { emptyReader.u32("shard"); }), "Pull message: field 'shard' needs 4 bytes, 0 are left");
}

}  // namespace
}  // namespace trainbench::engine::framing
