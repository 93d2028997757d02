#pragma once
// Gloo's rendezvous Store as GlooCollective hands it to Gloo: passes every call through to the job's
// store, and reads on the way what Gloo publishes there, for the guard (glooguard.h): key "<rank>"
// holds that rank's listening address for each of its peers, one tcp::Address record per peer in
// rank order. The first time Gloo waits for a peer's key it waits for every peer's at once (each
// rank publishes before it waits, so this waits no longer than Gloo would), so that the side of
// every pair (who connects, who accepts) is known before Gloo connects the first one.
#include <gloo/rendezvous/store.h>
#include <sys/socket.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace trainbench::engine {

class GlooSession;

class GlooAddressBook final : public gloo::rendezvous::Store {
public:
    // `arrival`: the first wait for the peers' keys (their arrival: processes start, load data and
    // build the model at their own pace) waits this long if it is longer than Gloo's timeout.
    GlooAddressBook(gloo::rendezvous::Store& inner, GlooSession& session,
                    std::chrono::milliseconds arrival = std::chrono::milliseconds{0});

    void set(const std::string& key, const std::vector<char>& data) override;
    std::vector<char> get(const std::string& key) override;
    void wait(const std::vector<std::string>& keys) override;
    void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

private:
    bool isPeerKey(const std::string& key) const;
    void fetchAll(const std::vector<std::string>& keys, const std::chrono::milliseconds* timeout);
    // The listening address record `index` of `value` (the value of key `key`, `count` records).
    sockaddr_storage record(const std::vector<char>& value, size_t index, const std::string& key) const;

    gloo::rendezvous::Store& inner_;
    GlooSession& session_;
    std::chrono::milliseconds arrival_;
    bool fetched_ = false;
    std::map<std::string, std::vector<char>> values_;  // the peers' keys, as fetched
};

// Gloo's rule for a pair (gloo/transport/tcp/pair.cc, Pair::connect): the side whose listening
// address compares greater (IP bytes, then the port in network order) connects; the other accepts.
bool glooConnectsOut(const sockaddr_storage& self, const sockaddr_storage& peer);

}  // namespace trainbench::engine
