// The rendezvous store's wire format on arbitrary bytes: the stream is cut into messages by their
// headers (checkHeader, a small cap so that "too long" is reachable), and every payload is decoded
// as each request type and as each reply that has a payload. A payload that decodes must encode
// back to exactly its bytes (one encoding per message: nothing lost or invented on the way), and
// a refusal of a request must say which and why.
#include <string>
#include <vector>

#include "engine/rendezvous/rendezvousmessages.h"
#include "engine/rendezvous/rendezvouswire.h"
#include "fuzzfile.h"

using namespace trainbench::engine::rendezvouswire;
using trainbench::fuzz::mismatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    for (size_t at = 0; size - at >= kHeaderBytes;) {
        Header h;
        if (!checkHeader(data + at, 1u << 16, &h).empty()) break;
        at += kHeaderBytes;
        if (size - at < h.length) break;
        const uint8_t* p = data + at;
        const std::string payload(reinterpret_cast<const char*>(p), h.length);
        at += h.length;
        for (uint16_t type = 1; type <= 4; ++type) {
            Request r;
            const std::string why = decodeRequest(type, p, payload.size(), &r);
            if (why.empty()) {
                if (encodeRequest(r) != payload) mismatch(std::string(messageTypeName(type)) + " does not encode back");
            } else if (why.rfind(std::string("malformed ") + messageTypeName(type) + " payload: ", 0) != 0) {
                mismatch("refusal that does not say what: " + why);
            }
        }
        std::vector<std::string> keys;
        if (decodeKeyList(p, payload.size(), &keys) && encodeKeyList(keys) != payload)
            mismatch("a key list does not encode back");
        std::string message;
        if (decodeErrorMessage(p, payload.size(), &message) && PayloadWriter().str(message).data() != payload)
            mismatch("an error message does not encode back");
    }
    return 0;
}
