#include "engine/emulation/collectivesimulator.h"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "engine/emulation/collectivenetwork.h"
#include "engine/emulation/collectivephases.h"
#include "engine/emulation/messageschedule.h"

namespace trainbench::engine {
namespace {

using MessageId = MessageSchedule::MessageId;
constexpr MessageId kNone = MessageSchedule::kNone;

void checkArgs(const Topology& t, double bytes, const char* op, bool flatOnly) {
    validateTopology(t);
    if (!std::isfinite(bytes) || bytes < 0.0)
        throw std::invalid_argument(std::string(op) + ": bytes must be finite and >= 0, got " + std::to_string(bytes));
    if (flatOnly && t.on_chip && t.on_chip->cores_per_chip > 1)
        throw std::invalid_argument(std::string(op) + " on " + t.describe() + ": simulated without an on-chip level only");
}

// Lays a collective out as messages, pass after pass. A node sends in a pass only after what it
// received in the previous pass has arrived (its gate): a dependency per node, never a barrier
// across nodes, so a node that finishes early starts early.
class Layout {
public:
    explicit Layout(const Topology& t)
        : t_(t), net_(t, schedule_), pending_(static_cast<size_t>(schedule_.nodeCount())),
          gate_(static_cast<size_t>(schedule_.nodeCount()), kNone) {
        // An all-reduce's count, about: two passes per dimension, p-1 steps, up to two directions,
        // every chip; the cores' passes likewise; a join per node and pass.
        size_t steps = 0;
        for (int e : t.dims) steps += static_cast<size_t>(e - 1);
        const size_t chips = static_cast<size_t>(net_.chips()), cores = static_cast<size_t>(net_.cores());
        const size_t messages = 4 * chips * steps + 2 * chips * cores * (cores - 1) + 2 * chips * cores * (t.dims.size() + 2);
        schedule_.reserve(messages, messages);
    }

    int cores() const { return net_.cores(); }

    // Reduce-scatter (or all-gather) among the cores of every chip, a ring of cores each.
    void onChipPass(bool gather, double n) {
        const int phase = beginPhase(phases::onChip(gather));
        const int c = net_.cores();
        std::vector<int> ring(static_cast<size_t>(c));
        for (int chip = 0; chip < net_.chips(); ++chip) {
            for (int k = 0; k < c; ++k) ring[static_cast<size_t>(k)] = net_.node(chip, k);
            ringSteps(ring, +1, n / c, phase, [&](int i, std::vector<int>& r) { r.push_back(net_.nextCore(chip, i)); });
        }
    }

    // One reduce-scatter (or all-gather) pass along chip dimension `dim`, all its rings at once.
    void chipPass(bool gather, int dim, double n) {
        const int phase = beginPhase(phases::pass(gather, t_, dim));
        const int p = net_.extent(dim);
        if (t_.kind == TopologyKind::Switch) {
            if (phases::switchUsesHalving(p)) return halvingSteps(gather, n, phase);
            std::vector<int> ring(static_cast<size_t>(p));
            for (int i = 0; i < p; ++i) ring[static_cast<size_t>(i)] = net_.router(i);
            return ringSteps(ring, +1, n / p, phase, [&](int i, std::vector<int>& r) {
                r.push_back(net_.up(i));
                r.push_back(net_.down((i + 1) % p));
            });
        }
        const bool wraps = t_.kind != TopologyKind::Torus || t_.wrap[static_cast<size_t>(dim)];
        const bool bothWays = t_.kind == TopologyKind::BidirectionalRing || (t_.kind == TopologyKind::Torus && wraps);
        std::vector<int> chips(static_cast<size_t>(p)), ring(static_cast<size_t>(p));
        for (int first = 0; first < net_.chips(); ++first) {
            if (net_.coordinate(first, dim) != 0) continue;
            for (int i = 0; i < p; ++i) {
                chips[static_cast<size_t>(i)] = first + i * net_.stride(dim);
                ring[static_cast<size_t>(i)] = net_.router(chips[static_cast<size_t>(i)]);
            }
            auto chip = [&](int i) { return chips[static_cast<size_t>(i)]; };
            auto forward = [&](int i, std::vector<int>& r) { r.push_back(net_.next(chip(i), dim)); };
            auto backward = [&](int i, std::vector<int>& r) { r.push_back(net_.previous(chip(i), dim)); };
            if (bothWays) {
                ringSteps(ring, +1, n / (2.0 * p), phase, forward);
                ringSteps(ring, -1, n / (2.0 * p), phase, backward);
            } else if (wraps) {
                ringSteps(ring, +1, n / p, phase, forward);
            } else {
                // A ring on a line: the last chip's edge back to the first walks the line backwards.
                ringSteps(ring, +1, n / p, phase, [&](int i, std::vector<int>& r) {
                    if (i + 1 < p) return r.push_back(net_.next(chip(i), dim));
                    for (int k = p - 1; k > 0; --k) r.push_back(net_.previous(chip(k), dim));
                });
            }
        }
    }

    // From chip 0 along the ring (a bidirectional ring: half each way), in `segments` pieces, each
    // forwarded as soon as it has arrived.
    void broadcast(double n, int segments) {
        const int phase = beginPhase(phases::kBroadcast);
        const int p = net_.chips();
        const bool bothWays = t_.kind == TopologyKind::BidirectionalRing;
        for (int dir : {+1, -1}) {
            if (dir < 0 && !bothWays) break;
            const double piece = (bothWays ? n / 2.0 : n) / segments;
            std::vector<MessageId> arrived(static_cast<size_t>(segments), gate_[static_cast<size_t>(net_.router(0))]);
            for (int j = 0; j + 1 < p; ++j) {
                const int chip = (dir * j + p) % p;
                const int link = dir > 0 ? net_.next(chip, 0) : net_.previous(chip, 0);
                for (MessageId& a : arrived) a = schedule_.send({&link, 1}, piece, {&a, 1}, phase);
            }
        }
    }

    // Every core of a chip waits, from now on, for all that any core of the chip has received.
    void mergeChips() {
        std::vector<MessageId> deps;
        for (int chip = 0; chip < net_.chips(); ++chip) {
            deps.clear();
            for (int k = 0; k < net_.cores(); ++k) {
                const auto n = static_cast<size_t>(net_.node(chip, k));
                deps.push_back(gate_[n]);
                deps.insert(deps.end(), pending_[n].begin(), pending_[n].end());
                pending_[n].clear();
            }
            const MessageId j = schedule_.join(deps);
            for (int k = 0; k < net_.cores(); ++k) gate_[static_cast<size_t>(net_.node(chip, k))] = j;
        }
    }

    SimulatedCollective run() const {
        const MessageSchedule::Result r = schedule_.run();
        SimulatedCollective out;
        out.seconds = r.seconds;
        out.messages = schedule_.messageCount();
        double before = 0.0;
        for (size_t ph = 0; ph < names_.size(); ++ph) {
            const double end = ph < r.phase_end_s.size() ? std::max(before, r.phase_end_s[ph]) : before;
            out.phases.push_back({names_[ph], end - before, ph < r.phase_messages.size() ? r.phase_messages[ph] : 0});
            before = end;
        }
        return out;
    }

private:
    int beginPhase(std::string name) {
        // Each node's next sends wait for everything it received in the pass before.
        for (size_t n = 0; n < pending_.size(); ++n) {
            if (pending_[n].empty()) continue;
            pending_[n].push_back(gate_[n]);
            gate_[n] = schedule_.join(pending_[n]);
            pending_[n].clear();
        }
        names_.push_back(std::move(name));
        return static_cast<int>(names_.size()) - 1;
    }

    // p-1 steps in direction `dir`; in step s, ring[i] sends one chunk to ring[i+dir] over
    // route(i) once its gate (s = 0) or the chunk it received in step s-1 has arrived.
    template <class Route>
    void ringSteps(const std::vector<int>& ring, int dir, double chunk, int phase, Route&& route) {
        const int p = static_cast<int>(ring.size());
        auto at = [](auto& v, int i) -> auto& { return v[static_cast<size_t>(i)]; };
        std::vector<MessageId> received(static_cast<size_t>(p), kNone), next(static_cast<size_t>(p), kNone);
        for (int s = 0; s + 1 < p; ++s) {
            for (int i = 0; i < p; ++i) {
                const int to = (i + dir + p) % p;
                const MessageId after = s == 0 ? at(gate_, at(ring, i)) : at(received, i);
                route_.clear();
                route(i, route_);
                const MessageId m = schedule_.send(route_, chunk, {&after, 1}, phase);
                at(next, to) = m;
                at(pending_, at(ring, to)).push_back(m);
            }
            std::swap(received, next);
        }
    }

    // Switch, p a power of two: recursive halving (partners p/2, p/4, ... apart, halving the data)
    // or recursive doubling (partners 1, 2, ... apart, doubling it). Each step waits for the last.
    void halvingSteps(bool gather, double n, int phase) {
        const int p = net_.chips();
        std::vector<MessageId> received(static_cast<size_t>(p), kNone), next(static_cast<size_t>(p), kNone);
        for (int k = 0; (1 << k) < p; ++k) {
            const int distance = gather ? (1 << k) : (p >> (k + 1));
            const double bytes = gather ? n / p * (1 << k) : n / (1 << (k + 1));
            for (int i = 0; i < p; ++i) {
                const int partner = i ^ distance;
                const MessageId after =
                    k == 0 ? gate_[static_cast<size_t>(net_.router(i))] : received[static_cast<size_t>(i)];
                const int route[] = {net_.up(i), net_.down(partner)};
                const MessageId m = schedule_.send(route, bytes, {&after, 1}, phase);
                next[static_cast<size_t>(partner)] = m;
                pending_[static_cast<size_t>(net_.router(partner))].push_back(m);
            }
            std::swap(received, next);
        }
    }

    const Topology& t_;
    MessageSchedule schedule_;
    CollectiveNetwork net_;
    std::vector<std::vector<MessageId>> pending_;  // what each node received since its gate
    std::vector<MessageId> gate_;                  // what each node's next pass waits for
    std::vector<std::string> names_;
    std::vector<int> route_;
};

// Reduce-scatter passes over the chip dimensions in order, on the shard the ones before left.
void reduceScatterPasses(const Topology& t, Layout& l, double n) {
    for (size_t d = 0; d < t.dims.size(); ++d) {
        if (t.dims[d] > 1) l.chipPass(false, static_cast<int>(d), n);
        n /= t.dims[d];
    }
}

// All-gather passes in reverse order; dimension d gathers n / (d_0 ... d_{d-1}).
void allGatherPasses(const Topology& t, Layout& l, double n) {
    std::vector<double> gathered(t.dims.size(), n);
    for (size_t d = 1; d < t.dims.size(); ++d) gathered[d] = gathered[d - 1] / t.dims[d - 1];
    for (size_t d = t.dims.size(); d-- > 0;)
        if (t.dims[d] > 1) l.chipPass(true, static_cast<int>(d), gathered[d]);
}

}  // namespace

SimulatedCollective simulateAllReduce(const Topology& t, double bytes) {
    checkArgs(t, bytes, "all-reduce", false);
    Layout l(t);
    if (l.cores() > 1) {
        l.onChipPass(false, bytes);
        l.mergeChips();
    }
    reduceScatterPasses(t, l, bytes);
    allGatherPasses(t, l, bytes);
    if (l.cores() > 1) {
        l.mergeChips();
        l.onChipPass(true, bytes);
    }
    return l.run();
}

SimulatedCollective simulateReduceScatter(const Topology& t, double bytes) {
    checkArgs(t, bytes, "reduce-scatter", true);
    Layout l(t);
    reduceScatterPasses(t, l, bytes);
    return l.run();
}

SimulatedCollective simulateAllGather(const Topology& t, double bytes) {
    checkArgs(t, bytes, "all-gather", true);
    Layout l(t);
    allGatherPasses(t, l, bytes);
    return l.run();
}

SimulatedCollective simulateBroadcast(const Topology& t, double bytes, int segments) {
    checkArgs(t, bytes, "broadcast", true);
    if (t.kind != TopologyKind::Ring && t.kind != TopologyKind::BidirectionalRing)
        throw std::invalid_argument("broadcast on " + t.describe() + ": simulated on rings only");
    if (segments < 1) throw std::invalid_argument("broadcast: segments must be >= 1, got " + std::to_string(segments));
    Layout l(t);
    if (t.chips() > 1) l.broadcast(bytes, segments);
    return l.run();
}

SimulatedCollective simulatePointToPoint(const LinkParams& link, double bytes, int hops) {
    if (hops < 1) throw std::invalid_argument("point-to-point: hops must be >= 1, got " + std::to_string(hops));
    MessageSchedule s;
    std::vector<int> route;
    s.addNode();
    for (int h = 0; h < hops; ++h) {
        s.addNode();
        route.push_back(s.addLink(h, h + 1, link));
    }
    s.send(route, bytes, {}, 0);
    const MessageSchedule::Result r = s.run();
    return {r.seconds, s.messageCount(), {{"point-to-point", r.seconds, 1}}};
}

}  // namespace trainbench::engine
