#include "engine/rendezvous/rendezvousmessages.h"

#include <algorithm>
#include <cstdint>

namespace trainbench::engine::rendezvouswire {
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

// A string (u32 length + bytes) whose length is within `cap` and the rest of the payload.
bool readString(PayloadReader& in, const char* what, uint32_t cap, std::string* s, std::string* why) {
    PayloadReader peek = in;
    uint32_t n = 0;
    if (!peek.u32(&n)) {
        *why = std::string("no ") + what;
        return false;
    }
    if (n > cap) {
        *why = std::string(what) + " of " + std::to_string(n) + " bytes is over the cap of " + std::to_string(cap) + " bytes";
        return false;
    }
    if (n > peek.remaining()) {
        *why = std::string(what) + " of " + std::to_string(n) + " bytes is longer than the rest of the payload (" +
               std::to_string(peek.remaining()) + " bytes)";
        return false;
    }
    return in.str(s, cap);
}

bool readKeys(PayloadReader& in, uint32_t n, std::vector<std::string>* keys, std::string* why) {
    keys->clear();
    keys->reserve(n);  // n is within the payload's room (readCount)
    std::string key;
    for (uint32_t i = 0; i < n; ++i) {
        if (!readString(in, "key", kMaxKeyBytes, &key, why)) return false;
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
            if (!readString(in, "token", kMaxTokenBytes, &out->token, &why)) return malformed(why);
            break;
        case MessageType::Set:
            if (!readString(in, "key", kMaxKeyBytes, &out->key, &why)) return malformed(why);
            out->value = in.rest();
            break;
        case MessageType::Get:
            if (!readString(in, "key", kMaxKeyBytes, &out->key, &why)) return malformed(why);
            break;
        case MessageType::Wait: {
            uint32_t n = 0;
            if (!in.u32(&out->timeoutMs)) return malformed("no timeout");
            if (!readCount(in, kMaxWaitKeys, &n, &why) || !readKeys(in, n, &out->keys, &why)) return malformed(why);
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
    return readCount(in, kMaxWaitKeys, &n, &why) && readKeys(in, n, keys, &why) && in.atEnd();
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

}  // namespace trainbench::engine::rendezvouswire
