#include "engine/collective/glooaddressbook.h"

#include <gloo/transport/tcp/address.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "engine/collective/gloosession.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

GlooAddressBook::GlooAddressBook(gloo::rendezvous::Store& inner, GlooSession& session,
                                 std::chrono::milliseconds arrival)
    : inner_(inner), session_(session), arrival_(arrival) {}

bool GlooAddressBook::isPeerKey(const std::string& key) const {
    if (key.empty() || key.size() > 9 || !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    const int r = std::stoi(key);
    return r != session_.rank() && r < session_.size();
}

sockaddr_storage GlooAddressBook::record(const std::vector<char>& value, size_t index, const std::string& key) const {
    const size_t count = static_cast<size_t>(session_.size() - 1);
    const size_t each = value.size() / count;
    if (value.size() % count != 0 || index >= count)
        throw RendezvousError("key '" + key + "' holds " + std::to_string(value.size()) + " bytes, not " +
                              std::to_string(count) + " Gloo address records");
    try {
        const gloo::transport::tcp::Address a(std::vector<char>(value.begin() + static_cast<std::ptrdiff_t>(index * each),
                                                                value.begin() + static_cast<std::ptrdiff_t>((index + 1) * each)));
        return a.getSockaddr();
    } catch (const std::exception& e) {
        throw RendezvousError("key '" + key + "' is not a list of Gloo addresses: " + e.what());
    }
}

void GlooAddressBook::set(const std::string& key, const std::vector<char>& data) {
    if (key == std::to_string(session_.rank())) {
        // Published before any peer can know these ports: the guard knows each listener's peer first.
        size_t index = 0;
        for (int peer = 0; peer < session_.size(); ++peer)
            if (peer != session_.rank()) session_.ownAddress(peer, record(data, index++, key));
    }
    inner_.set(key, data);
}

std::vector<char> GlooAddressBook::get(const std::string& key) {
    if (auto it = values_.find(key); it != values_.end()) return it->second;
    return inner_.get(key);
}

void GlooAddressBook::wait(const std::vector<std::string>& keys) { fetchAll(keys, nullptr); }

void GlooAddressBook::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
    fetchAll(keys, &timeout);
}

void GlooAddressBook::fetchAll(const std::vector<std::string>& keys, const std::chrono::milliseconds* timeout) {
    const bool forPeers = !keys.empty() && std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return isPeerKey(k); });
    if (fetched_ || !forPeers) {
        timeout ? inner_.wait(keys, *timeout) : inner_.wait(keys);
        return;
    }
    std::vector<std::string> all;
    for (int peer = 0; peer < session_.size(); ++peer)
        if (peer != session_.rank()) all.push_back(std::to_string(peer));
    // The peers' first keys are their arrival: the longer of Gloo's timeout and the allowance.
    if (arrival_.count() > 0 && (!timeout || arrival_ > *timeout)) inner_.wait(all, arrival_);
    else if (timeout) inner_.wait(all, *timeout);
    else inner_.wait(all);
    for (const std::string& key : all) {
        const int peer = std::stoi(key);
        std::vector<char> value = inner_.get(key);
        // Rank `peer` lists its addresses in rank order without its own (Context::extractAddress).
        const int index = session_.rank() > peer ? session_.rank() - 1 : session_.rank();
        session_.peerAddress(peer, record(value, static_cast<size_t>(index), key));
        values_[key] = std::move(value);
    }
    fetched_ = true;
}

bool glooConnectsOut(const sockaddr_storage& self, const sockaddr_storage& peer) {
    int rv = 0;
    if (self.ss_family == AF_INET) {
        const auto& a = reinterpret_cast<const sockaddr_in&>(self);
        const auto& b = reinterpret_cast<const sockaddr_in&>(peer);
        rv = std::memcmp(&a.sin_addr, &b.sin_addr, sizeof(in_addr));
        if (rv == 0) rv = a.sin_port - b.sin_port;
    } else {
        const auto& a = reinterpret_cast<const sockaddr_in6&>(self);
        const auto& b = reinterpret_cast<const sockaddr_in6&>(peer);
        rv = std::memcmp(&a.sin6_addr, &b.sin6_addr, sizeof(in6_addr));
        if (rv == 0) rv = a.sin6_port - b.sin6_port;
    }
    return rv > 0;
}

}  // namespace trainbench::engine
