#pragma once
// Collective over Gloo's TCP transport between the processes of a multi_worker job. The ranks meet
// through the chief's RendezvousServer (its host:port and the job token), then exchange data directly over
// a full mesh of TCP connections, each of which proves the job token before Gloo uses it (glooguard.h):
// a connection from anyone else is refused and reported, naming its address. allReduceSum is Gloo's ring (reduce-scatter, then all-gather):
// each element is summed on one rank and copied to the others, so every rank holds the same bits.
// One thread at a time calls it (the strategy's), as with any Collective.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "engine/collective/collective.h"

namespace trainbench::engine {

struct GlooTransport {
    // The address this rank's connections listen on (the task's own host in the cluster spec); the
    // other ranks must be able to reach it. A wildcard address (0.0.0.0, ::) is refused.
    std::string hostname = "127.0.0.1";
    // A network interface (e.g. "eth0") to listen on instead of `hostname`.
    std::string iface;
    // Namespace of this group's keys in the store, so several groups can meet through one store.
    std::string keyPrefix = "gloo";
    // Told about every connection refused for not proving the job token (from any thread, Gloo's
    // own included). Default: one line on stderr.
    std::function<void(const std::string&)> report;
    // How long a rank waits for every other rank to publish its addresses in the store (their
    // processes start, load data and build the model at different speeds); connecting, and every
    // operation, then has the collective's timeout. Zero means the collective's timeout; a longer
    // allowance keeps a short strategy.timeout_s for the steps.
    std::chrono::milliseconds arrivalTimeout{0};
};

class GlooCollective final : public Collective {
public:
    // Meets the other ranks through the store at `storeAddress` (host:port). Throws RendezvousError
    // if the store cannot be reached, refuses `token`, or the other ranks do not all arrive within
    // the transport's arrivalTimeout (or `timeout`); CollectiveError if connecting to them fails (the message names the peer, and the
    // address of every stranger refused meanwhile). `timeout` also bounds every operation.
    GlooCollective(int rank, int size, const std::string& storeAddress, const std::string& token,
                   std::chrono::milliseconds timeout, const GlooTransport& transport = {});
    ~GlooCollective() override;
    GlooCollective(const GlooCollective&) = delete;
    GlooCollective& operator=(const GlooCollective&) = delete;

    int rank() const override;
    int size() const override;
    // Each throws CollectiveError naming this rank and the operation when a peer fails or the timeout
    // passes; the group is unusable afterwards (later calls throw at once).
    void allReduceSum(float* data, size_t count) override;
    void broadcast(float* data, size_t count, int root) override;
    void barrier() override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
