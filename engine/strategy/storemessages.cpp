#include "engine/strategy/storemessages.h"

#include <algorithm>
#include <cstdint>

namespace trainbench::engine::storewire {
namespace {

// A count of strings, each at least its 4-byte length: more than the payload has room for is a lie,
// refused before any is read or space reserved for them.
bool readCount(PayloadReader& in, uint32_t cap, uint32_t* n, std::string* why) {
    if (!in.u32(n)) {
        *why = "no count";
        return false;
    }
    const size_t room = in.remaining() / 4;
    if (*n > cap || *n > room) {
        *why = std::to_string(*n) + " keys promised, room for at most " + std::to_string(std::min<size_t>(cap, room));
        return false;
    }
    return true;
}

bool readKeys(PayloadReader& in, uint32_t n, std::vector<std::string>* keys) {
    keys->clear();
    keys->reserve(n);
    std::string key;
    for (uint32_t i = 0; i < n; ++i) {
        if (!in.str(&key, kMaxKeyBytes)) return false;
        keys->push_back(std::move(key));
    }
    return true;
}

}  // namespace

std::string decodeRequest(uint16_t type, const uint8_t* payload, size_t size, Request* out) {
    PayloadReader in(payload, size);
    std::string why;
    const auto malformed = [&](const std::string& what) {
        return "malformed " + std::string(messageTypeName(type)) + " payload: " + what;
    };
    out->type = static_cast<MessageType>(type);
    switch (out->type) {
        case MessageType::Hello:
            if (!in.str(&out->token, kMaxTokenBytes)) return malformed("no token of at most " + std::to_string(kMaxTokenBytes) + " bytes");
            break;
        case MessageType::Set:
            if (!in.str(&out->key, kMaxKeyBytes)) return malformed("no key of at most " + std::to_string(kMaxKeyBytes) + " bytes");
            out->value = in.rest();
            break;
        case MessageType::Get:
            if (!in.str(&out->key, kMaxKeyBytes)) return malformed("no key of at most " + std::to_string(kMaxKeyBytes) + " bytes");
            break;
        case MessageType::Wait: {
            uint32_t n = 0;
            if (!in.u32(&out->timeoutMs)) return malformed("no timeout");
            if (!readCount(in, kMaxWaitKeys, &n, &why)) return malformed(why);
            if (!readKeys(in, n, &out->keys)) return malformed("a key longer than the rest of the payload or " +
                                                               std::to_string(kMaxKeyBytes) + " bytes");
            break;
        }
        default: return "unexpected message type " + std::to_string(type) + " (" + messageTypeName(type) + ")";
    }
    if (!in.atEnd()) return malformed(std::to_string(in.remaining()) + " bytes after the message");
    return {};
}

std::string encodeRequest(const Request& r) {
    PayloadWriter w;
    switch (r.type) {
        case MessageType::Hello: w.str(r.token); break;
        case MessageType::Set: w.str(r.key).bytes(r.value.data(), r.value.size()); break;
        case MessageType::Get: w.str(r.key); break;
        case MessageType::Wait:
            w.u32(r.timeoutMs).u32(static_cast<uint32_t>(r.keys.size()));
            for (const std::string& k : r.keys) w.str(k);
            break;
        default: break;
    }
    return w.data();
}

bool decodeKeyList(const uint8_t* payload, size_t size, std::vector<std::string>* keys) {
    PayloadReader in(payload, size);
    uint32_t n = 0;
    std::string why;
    return readCount(in, kMaxWaitKeys, &n, &why) && readKeys(in, n, keys) && in.atEnd();
}

std::string encodeKeyList(const std::vector<std::string>& keys) {
    PayloadWriter w;
    w.u32(static_cast<uint32_t>(keys.size()));
    for (const std::string& k : keys) w.str(k);
    return w.data();
}

bool decodeErrorMessage(const uint8_t* payload, size_t size, std::string* message) {
    PayloadReader in(payload, size);
    return in.str(message, static_cast<uint32_t>(std::min<size_t>(size, UINT32_MAX))) && in.atEnd();
}

}  // namespace trainbench::engine::storewire
