// The frame decoder of the parameter-server protocol on arbitrary bytes, fed whole and in pieces
// of a size the input picks: the same frames and the same error either way, every error a
// ProtocolError, and the frames it accepts encode back to exactly the bytes they came from.
#include <string>
#include <vector>

#include "engine/net/framing.h"
#include "engine/util/errors.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::mismatch;

namespace {

struct Outcome {
    std::vector<framing::Frame> frames;
    std::string error;
};

Outcome decode(const uint8_t* data, size_t size, size_t piece) {
    Outcome o;
    framing::FrameDecoder d(1 << 16);  // a small cap, so that "too long" is reachable
    try {
        for (size_t at = 0; at < size; at += piece) d.feed(data + at, std::min(piece, size - at), o.frames);
        d.finish();
    } catch (const ProtocolError& e) {
        o.error = e.what();
    }
    return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const size_t piece = 1 + data[0] % 23;
    const Outcome whole = decode(data + 1, size - 1, size);
    const Outcome pieces = decode(data + 1, size - 1, piece);
    if (whole.error != pieces.error) mismatch("whole: '" + whole.error + "', in pieces: '" + pieces.error + "'");
    if (whole.frames.size() != pieces.frames.size()) mismatch("frame counts differ");
    std::string again;
    for (size_t i = 0; i < whole.frames.size(); ++i) {
        const auto& a = whole.frames[i];
        if (a.type != pieces.frames[i].type || a.payload != pieces.frames[i].payload) mismatch("frames differ");
        again += framing::encode(a.type, std::string(a.payload.begin(), a.payload.end()));
    }
    if (again.size() > size - 1 || again.compare(0, again.size(), reinterpret_cast<const char*>(data + 1), again.size()) != 0)
        mismatch("accepted frames do not encode back to their bytes");
    if (whole.error.empty() && again.size() != size - 1) mismatch("bytes left over without an error");
    return 0;
}
