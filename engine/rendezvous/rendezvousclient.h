#pragma once
// Gloo's rendezvous Store as a client of the chief's RendezvousServer: each rank publishes the addresses
// of its Gloo pairs through it and waits for the others'. One TCP connection, opened on construction
// (retried until the timeout, since the chief may come up after the workers) and authenticated with
// the job token. Not thread-safe: Gloo calls it from one thread during rendezvous.
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace trainbench::engine {

class RendezvousClient : public gloo::rendezvous::Store {
public:
    // `address` is host:port of the RendezvousServer. `timeout` bounds connecting and every call (a
    // wait() given its own timeout uses that one). Throws RendezvousError naming the address when
    // the store cannot be reached in time or refuses the token.
    RendezvousClient(const std::string& address, const std::string& token, std::chrono::milliseconds timeout);
    ~RendezvousClient() override;
    RendezvousClient(const RendezvousClient&) = delete;
    RendezvousClient& operator=(const RendezvousClient&) = delete;

    void set(const std::string& key, const std::vector<char>& data) override;
    // Waits (up to the timeout) for the key, as Gloo's stores do, then returns its value.
    std::vector<char> get(const std::string& key) override;
    void wait(const std::vector<std::string>& keys) override;
    // Throws RendezvousError naming the keys still missing and the store's host:port on timeout.
    // A zero timeout means the client's own.
    void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

    const std::string& address() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
