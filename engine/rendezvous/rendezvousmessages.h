#pragma once
// The payloads of the rendezvous store's messages (rendezvouswire.h), decoded in one place for the server,
// the client and the fuzz target: every length and count is checked against what is left of the
// payload and against its cap before anything is allocated, and trailing bytes are refused, so
// a payload decodes to exactly one message and encodes back to the same bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/rendezvous/rendezvouswire.h"

namespace trainbench::engine::rendezvouswire {

inline constexpr uint32_t kMaxTokenBytes = 1024;
// Gloo waits for one key per peer; a job has far fewer ranks than this.
inline constexpr uint32_t kMaxWaitKeys = 65536;

// A client's request.
struct Request {
    MessageType type = MessageType::Hello;
    std::string token;              // Hello
    std::string key;                // Set, Get
    std::vector<char> value;        // Set: the rest of the payload
    uint32_t timeoutMs = 0;         // Wait
    std::vector<std::string> keys;  // Wait
};

// Decodes the payload of a request of `type`; "" with *out filled, else what is wrong, starting
// "malformed <type> payload" ("malformed Wait payload: 1000000 keys promised, room for at most 2").
std::string decodeRequest(uint16_t type, const uint8_t* payload, size_t size, Request* out);
// The payload of a request (decodeRequest's inverse).
std::string encodeRequest(const Request& request);

// The payloads of the replies that carry more than their type: TimedOut's missing keys (u32 n, n
// strings) and Error's message (one string). False if the payload is not exactly that.
bool decodeKeyList(const uint8_t* payload, size_t size, std::vector<std::string>* keys);
std::string encodeKeyList(const std::vector<std::string>& keys);
bool decodeErrorMessage(const uint8_t* payload, size_t size, std::string* message);

}  // namespace trainbench::engine::rendezvouswire
