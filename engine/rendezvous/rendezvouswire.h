#pragma once
// The wire format of the rendezvous store (RendezvousServer in the chief, RendezvousClient in every rank).
// Every message, either way, is a 12-byte header and then `length` bytes of payload:
//
//   offset 0  u32 LE  magic 0x564B4254 ("TBKV" on the wire)
//   offset 4  u16 LE  protocol version (kVersion)
//   offset 6  u16 LE  message type (MessageType)
//   offset 8  u32 LE  payload length in bytes, at most the receiver's cap
//
// In payloads a string is u32 LE length + bytes. The header layout never changes between versions,
// so a peer of another version can always read an Error reply that says which version is spoken.
// A connection is one request, one reply, in turn; the first request must be Hello with the job token.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainbench::engine::rendezvouswire {

inline constexpr uint32_t kMagic = 0x564B4254;
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 12;
inline constexpr uint32_t kDefaultMaxPayload = 1u << 20;  // Gloo's addresses: ~200 bytes per peer
inline constexpr uint32_t kMaxKeyBytes = 4096;

enum class MessageType : uint16_t {
    // client -> server
    Hello = 1,  // string token                         -> Ok | Error (then closed)
    Set = 2,    // string key, then the value (the rest) -> Ok
    Get = 3,    // string key                           -> Ok (payload: the value) | NotFound (string key)
    Wait = 4,   // u32 timeout ms, u32 n, n string keys  -> Ok | TimedOut (u32 n, the missing keys)
    // server -> client
    Ok = 16,
    NotFound = 17,
    TimedOut = 18,
    Error = 19,  // string message; the server closes the connection after it
};
const char* messageTypeName(uint16_t type);
bool isRequest(uint16_t type);

struct Header {
    uint16_t version = 0;
    uint16_t type = 0;
    uint32_t length = 0;
};

void encodeHeader(uint8_t* out, MessageType type, uint32_t length);
// Whether a header starts with our magic (if not, the peer speaks another protocol altogether).
bool hasOurMagic(const uint8_t* in);
// Reads a header; returns "" if it is ours and within `maxPayload`, else what is wrong with it.
// A foreign version is reported (with *out filled) so the caller can answer with an Error.
std::string checkHeader(const uint8_t* in, uint32_t maxPayload, Header* out);

// Builds a payload.
class PayloadWriter {
public:
    PayloadWriter& u32(uint32_t v);
    PayloadWriter& str(std::string_view s);
    PayloadWriter& bytes(const void* p, size_t n);
    const std::string& data() const { return buf_; }

private:
    std::string buf_;
};

// Reads a payload; every read returns false (and reads nothing) when the payload is too short.
class PayloadReader {
public:
    PayloadReader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
    bool u32(uint32_t* v);
    bool str(std::string* s, uint32_t maxBytes);
    std::vector<char> rest();
    bool atEnd() const { return p_ == end_; }
    size_t remaining() const { return static_cast<size_t>(end_ - p_); }

private:
    const uint8_t* p_;
    const uint8_t* end_;
};

// A whole message: header + payload.
std::string frame(MessageType type, std::string_view payload);

}  // namespace trainbench::engine::rendezvouswire
