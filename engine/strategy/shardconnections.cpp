#include "engine/strategy/shardconnections.h"

namespace trainbench::engine {

namespace {

std::string peerName(uint32_t index, const std::string& address) {
    return "parameter server " + std::to_string(index) + " at " + address;
}

// FramedClient's errors start with the peer's name; a payload that does not decode has none.
std::string withoutPeer(const std::string& peer, const std::string& what) {
    const std::string prefix = peer + ": ";
    return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

}  // namespace

template <class Fn>
void ShardConnections::onServer(Server& s, const Fn& fn) {
    try {
        fn();
    } catch (const ParameterServerLost&) {
        throw;
    } catch (const ConnectionError& e) {
        const std::string peer = peerName(s.index, s.address);
        throw ParameterServerLost(s.index, s.address, peer + ": " + withoutPeer(peer, e.what()));
    } catch (const ProtocolError& e) {
        const std::string peer = peerName(s.index, s.address);
        throw ParameterServerLost(s.index, s.address, peer + " broke the protocol: " + withoutPeer(peer, e.what()));
    }
}

ShardConnections::ShardConnections(const std::vector<HostPort>& servers, const std::vector<std::vector<ps::Span>>& shards,
                                   const std::string& token, uint32_t worker, std::chrono::milliseconds connectTimeout,
                                   std::chrono::milliseconds timeout)
    : servers_(servers.size()), timeout_(timeout) {
    for (size_t k = 0; k < servers.size(); ++k) {
        Server& s = servers_[k];
        s.index = static_cast<uint32_t>(k);
        s.address = servers[k].text();
        s.shard = k < shards.size() ? shards[k] : std::vector<ps::Span>{};
        s.push.worker = worker;
        s.push.gradient.resize(static_cast<size_t>(ps::shardSize(s.shard)));
        onServer(s, [&] {
            s.client = std::make_unique<FramedClient>(servers[k].host, servers[k].port, peerName(s.index, s.address),
                                                      connectTimeout, timeout_);
            s.client->send(ps::Hello{token, ps::Role::Worker, worker}.encode());
        });
    }
    for (Server& s : servers_) {
        onServer(s, [&] {
            const ps::Welcome w = ps::Welcome::decode(s.client->receive(timeout_));
            if (w.role != ps::Role::ParameterServer || w.index != s.index)
                throw ProtocolError("answered Hello as the " + ps::roleName(w.role) + " with index " +
                                    std::to_string(w.index) + " (is the job layout's address list in index order?)");
        });
    }
}

void ShardConnections::pull(int64_t step, float* params) {
    const std::string request = ps::Pull{step}.encode();
    for (Server& s : servers_) onServer(s, [&] { s.client->send(request); });
    for (Server& s : servers_) {
        onServer(s, [&] {
            const ps::Params p = ps::Params::decode(s.client->receive(timeout_));
            if (p.values.size() != s.push.gradient.size())
                throw ProtocolError("Params message: " + std::to_string(p.values.size()) + " values for a shard of " +
                                    std::to_string(s.push.gradient.size()));
            ps::scatter(p.values.data(), s.shard, params);
            s.pulledVersion = p.version;
        });
    }
}

std::vector<uint64_t> ShardConnections::push(int64_t step, const float* grads) {
    for (Server& s : servers_) {
        ps::gather(grads, s.shard, s.push.gradient.data());
        s.push.step = step;
        s.push.pulled_version = s.pulledVersion;
        onServer(s, [&] { s.client->send(s.push.encode()); });
    }
    std::vector<uint64_t> staleness;
    for (Server& s : servers_)
        onServer(s, [&] { staleness.push_back(ps::Pushed::decode(s.client->receive(timeout_)).staleness); });
    return staleness;
}

}  // namespace trainbench::engine
