#include "engine/rendezvous/rendezvouswire.h"

#include <charconv>
#include <cstring>

#include "engine/util/errors.h"
#include "engine/util/littleendian.h"

namespace trainbench::engine::rendezvouswire {

const char* messageTypeName(uint16_t type) {
    switch (static_cast<MessageType>(type)) {
        case MessageType::Hello: return "Hello";
        case MessageType::Set: return "Set";
        case MessageType::Get: return "Get";
        case MessageType::Wait: return "Wait";
        case MessageType::Ok: return "Ok";
        case MessageType::NotFound: return "NotFound";
        case MessageType::TimedOut: return "TimedOut";
        case MessageType::Error: return "Error";
    }
    return "unknown";
}

bool isRequest(uint16_t type) { return type >= 1 && type <= 4; }

void encodeHeader(uint8_t* out, MessageType type, uint32_t length) {
    store32(out, kMagic);
    store16(out + 4, kVersion);
    store16(out + 6, static_cast<uint16_t>(type));
    store32(out + 8, length);
}

bool hasOurMagic(const uint8_t* in) { return load32(in) == kMagic; }

std::string checkHeader(const uint8_t* in, uint32_t maxPayload, Header* out) {
    const uint32_t magic = load32(in);
    if (magic != kMagic) {
        char hex[9] = {};
        std::to_chars(hex, hex + 8, magic, 16);
        return std::string("bad magic 0x") + hex + " (not a trainbench rendezvous message)";
    }
    out->version = load16(in + 4);
    out->type = load16(in + 6);
    out->length = load32(in + 8);
    if (out->version != kVersion)
        return "protocol version " + std::to_string(out->version) + " (this side speaks " +
               std::to_string(kVersion) + ")";
    if (out->length > maxPayload)
        return std::string(messageTypeName(out->type)) + " message of " + std::to_string(out->length) +
               " bytes exceeds the cap of " + std::to_string(maxPayload);
    return {};
}

PayloadWriter& PayloadWriter::u32(uint32_t v) {
    uint8_t b[4];
    store32(b, v);
    buf_.append(reinterpret_cast<const char*>(b), 4);
    return *this;
}

PayloadWriter& PayloadWriter::str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    buf_.append(s);
    return *this;
}

PayloadWriter& PayloadWriter::bytes(const void* p, size_t n) {
    buf_.append(static_cast<const char*>(p), n);
    return *this;
}

bool PayloadReader::u32(uint32_t* v) {
    if (end_ - p_ < 4) return false;
    *v = load32(p_);
    p_ += 4;
    return true;
}

bool PayloadReader::str(std::string* s, uint32_t maxBytes) {
    if (end_ - p_ < 4) return false;
    const uint32_t n = load32(p_);
    if (n > maxBytes || static_cast<size_t>(end_ - p_ - 4) < n) return false;
    s->assign(reinterpret_cast<const char*>(p_ + 4), n);
    p_ += 4 + n;
    return true;
}

std::vector<char> PayloadReader::rest() {
    std::vector<char> v(reinterpret_cast<const char*>(p_), reinterpret_cast<const char*>(end_));
    p_ = end_;
    return v;
}

std::string frame(MessageType type, std::string_view payload) {
    std::string m(kHeaderBytes + payload.size(), '\0');
    encodeHeader(reinterpret_cast<uint8_t*>(m.data()), type, static_cast<uint32_t>(payload.size()));
    std::memcpy(m.data() + kHeaderBytes, payload.data(), payload.size());
    return m;
}

}  // namespace trainbench::engine::rendezvouswire
