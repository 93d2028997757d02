// The messages of the parameter-server protocol on arbitrary bytes: the input is cut into frames,
// and every frame's payload is decoded as each of the message types (so that every decoder sees
// every payload, whatever type the frame says). Every error must be a ProtocolError, and a
// message that decodes must encode back to exactly the frame it came from (the encoding is
// canonical: nothing is lost or invented on the way).
#include <string>
#include <vector>

#include "engine/net/framing.h"
#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::mismatch;

namespace {

template <class Message>
std::string reencode(const framing::Frame& f) {
    return Message::decode(f).encode();
}

using Codec = std::string (*)(const framing::Frame&);
// By message type (psprotocol.h's numbering).
const Codec kCodecs[] = {nullptr,
                         reencode<ps::Hello>,    reencode<ps::Welcome>,   reencode<ps::ErrorMessage>,
                         reencode<ps::Init>,     reencode<ps::InitDone>,  reencode<ps::Pull>,
                         reencode<ps::Params>,   reencode<ps::Push>,      reencode<ps::Pushed>,
                         reencode<ps::GetState>, reencode<ps::State>,     reencode<ps::Shutdown>,
                         reencode<ps::JobLayout>, reencode<ps::Task>,     reencode<ps::Result>,
                         reencode<ps::Heartbeat>, reencode<ps::PsLost>};
static_assert(sizeof kCodecs / sizeof kCodecs[0] == ps::kLastType + 1, "one codec per message type");

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    framing::FrameDecoder decoder(1 << 20);
    std::vector<framing::Frame> frames;
    try {
        decoder.feed(data, size, frames);
        decoder.finish();
    } catch (const ProtocolError&) {
        // The frames before the bad header are still decoded below.
    }
    for (framing::Frame& f : frames) {
        const std::string payload(f.payload.begin(), f.payload.end());
        for (uint16_t type = 1; type <= ps::kLastType; ++type) {
            f.type = type;
            std::string again;
            try {
                again = kCodecs[type](f);
            } catch (const ProtocolError&) {
                continue;
            }
            if (again != framing::encode(type, payload))
                mismatch(ps::messageName(type) + " does not encode back to the frame it was decoded from");
        }
    }
    return 0;
}
