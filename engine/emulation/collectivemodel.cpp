#include "engine/emulation/collectivemodel.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/emulation/collectivephases.h"

namespace trainbench::engine {
namespace {

void checkBytes(double bytes, const char* op) {
    if (!std::isfinite(bytes) || bytes < 0.0)
        throw std::invalid_argument(std::string(op) + ": bytes must be finite and >= 0, got " + std::to_string(bytes));
}

void checkFlat(const Topology& t, const char* op) {
    if (t.on_chip && t.on_chip->cores_per_chip > 1)
        throw std::invalid_argument(std::string(op) + " on " + t.describe() +
                                    ": modelled without an on-chip level only (all-reduce has one)");
}

// A pass is one reduce-scatter or one all-gather over a ring of p nodes; n is the buffer a node holds
// before the reduce-scatter (or after the all-gather). Derivations: docs/collectives-model.md.

// p-1 steps; in each, every node sends an n/p chunk to its successor, which must have arrived
// before the successor can send it on.
PhaseTime unidirectionalPass(std::string name, int p, double n, const LinkParams& l) {
    return {std::move(name), (p - 1) * l.alpha_s, (p - 1) * (n / p) * l.beta_s_per_byte};
}

// Two rings, one each way, each on half the data: same steps, half the bytes per step.
PhaseTime bidirectionalPass(std::string name, int p, double n, const LinkParams& l) {
    return {std::move(name), (p - 1) * l.alpha_s, (p - 1) * (n / (2.0 * p)) * l.beta_s_per_byte};
}

// The ring 0 -> 1 -> ... -> p-1 -> 0 laid on a line: the edge p-1 -> 0 goes back over p-1 links
// (cut-through: (p-1)α + chunk·β). The critical chain of p-1 steps crosses it once.
PhaseTime linePass(std::string name, int p, double n, const LinkParams& l) {
    const double chunk = n / p;
    const double shortEdge = l.alpha_s + chunk * l.beta_s_per_byte;
    const double longEdge = (p - 1) * l.alpha_s + chunk * l.beta_s_per_byte;
    const double latency = (p - 2) * l.alpha_s + (p - 1) * l.alpha_s;
    const double total = (p - 2) * shortEdge + longEdge;
    return {std::move(name), latency, total - latency};
}

// log2(p) pairwise exchanges of n/2, n/4, ..., n/p: log2(p)·α + (p-1)/p·n·β.
PhaseTime halvingPass(std::string name, int p, double n, const LinkParams& l) {
    const double steps = std::log2(static_cast<double>(p));
    return {std::move(name), steps * l.alpha_s, (1.0 - 1.0 / p) * n * l.beta_s_per_byte};
}

PhaseTime flatPass(const Topology& t, bool gather, int dim, double n) {
    const int p = t.dims[static_cast<size_t>(dim)];
    std::string name = phases::pass(gather, t, dim);
    switch (t.kind) {
    case TopologyKind::Ring: return unidirectionalPass(std::move(name), p, n, t.link);
    case TopologyKind::BidirectionalRing: return bidirectionalPass(std::move(name), p, n, t.link);
    case TopologyKind::Switch:
        return phases::switchUsesHalving(p) ? halvingPass(std::move(name), p, n, t.link)
                                            : unidirectionalPass(std::move(name), p, n, t.link);
    case TopologyKind::Torus:
        return t.wrap[static_cast<size_t>(dim)] ? bidirectionalPass(std::move(name), p, n, t.link)
                                                : linePass(std::move(name), p, n, t.link);
    }
    return {};
}

// Reduce-scatter over the dimensions in order: the pass over dimension d works on the shard left
// by the dimensions before it, n / (d_0 · ... · d_{d-1}).
void appendReduceScatter(const Topology& t, double n, CollectiveTime& out) {
    double shard = n;
    for (size_t d = 0; d < t.dims.size(); ++d) {
        if (t.dims[d] > 1) out.phases.push_back(flatPass(t, false, static_cast<int>(d), shard));
        shard /= t.dims[d];
    }
}

// All-gather in the reverse order; the pass over dimension d gathers n / (d_0 · ... · d_{d-1}).
void appendAllGather(const Topology& t, double n, CollectiveTime& out) {
    for (size_t d = t.dims.size(); d-- > 0;) {
        double gathered = n;
        for (size_t k = 0; k < d; ++k) gathered /= t.dims[k];
        if (t.dims[d] > 1) out.phases.push_back(flatPass(t, true, static_cast<int>(d), gathered));
    }
}

}  // namespace

double CollectiveTime::latency_s() const {
    double s = 0.0;
    for (const PhaseTime& p : phases) s += p.latency_s;
    return s;
}

double CollectiveTime::bandwidth_s() const {
    double s = 0.0;
    for (const PhaseTime& p : phases) s += p.bandwidth_s;
    return s;
}

double CollectiveTime::seconds() const { return latency_s() + bandwidth_s(); }

CollectiveTime allReduceTime(const Topology& t, double bytes) {
    validateTopology(t);
    checkBytes(bytes, "all-reduce");
    CollectiveTime out;
    const int cores = t.on_chip ? t.on_chip->cores_per_chip : 1;
    // Cores first: each ends with the chip's sum of 1/c of the buffer; the chips' torus then
    // reduces the whole buffer (the cores' shards travel through the chip's links together).
    if (cores > 1) out.phases.push_back(unidirectionalPass(phases::onChip(false), cores, bytes, t.on_chip->link));
    appendReduceScatter(t, bytes, out);
    appendAllGather(t, bytes, out);
    if (cores > 1) out.phases.push_back(unidirectionalPass(phases::onChip(true), cores, bytes, t.on_chip->link));
    return out;
}

double allReduceSeconds(const Topology& t, double bytes) { return allReduceTime(t, bytes).seconds(); }

CollectiveTime reduceScatterTime(const Topology& t, double bytes) {
    validateTopology(t);
    checkBytes(bytes, "reduce-scatter");
    checkFlat(t, "reduce-scatter");
    CollectiveTime out;
    appendReduceScatter(t, bytes, out);
    return out;
}

CollectiveTime allGatherTime(const Topology& t, double bytes) {
    validateTopology(t);
    checkBytes(bytes, "all-gather");
    checkFlat(t, "all-gather");
    CollectiveTime out;
    appendAllGather(t, bytes, out);
    return out;
}

CollectiveTime broadcastTime(const Topology& t, double bytes, int segments) {
    validateTopology(t);
    checkBytes(bytes, "broadcast");
    checkFlat(t, "broadcast");
    if (t.kind != TopologyKind::Ring && t.kind != TopologyKind::BidirectionalRing)
        throw std::invalid_argument("broadcast on " + t.describe() + ": modelled on rings only");
    if (segments < 1 || segments > kMaxBroadcastSegments)
        throw std::invalid_argument("broadcast: segments must be 1.." + std::to_string(kMaxBroadcastSegments) +
                                    ", got " + std::to_string(segments));
    CollectiveTime out;
    const int p = t.dims[0];
    if (p == 1) return out;
    // A pipeline of p-1 links and S segments drains in p+S-2 segment times.
    const double perDirection = t.kind == TopologyKind::BidirectionalRing ? bytes / 2.0 : bytes;
    const double steps = p + segments - 2;
    out.phases.push_back({phases::kBroadcast, steps * t.link.alpha_s,
                          steps * (perDirection / segments) * t.link.beta_s_per_byte});
    return out;
}

int broadcastSegments(const Topology& t, double bytes) {
    const int p = t.dims.empty() ? 1 : t.dims[0];
    const double perDirection = t.kind == TopologyKind::BidirectionalRing ? bytes / 2.0 : bytes;
    const double nb = perDirection * t.link.beta_s_per_byte;
    if (p <= 2 || nb <= 0.0) return 1;
    if (t.link.alpha_s <= 0.0) return kMaxBroadcastSegments;
    // d/dS of (p+S-2)(α + nβ/S) vanishes at S = sqrt((p-2)·nβ/α); try the integers either side.
    const double best = std::sqrt((p - 2) * nb / t.link.alpha_s);
    auto cost = [&](int s) { return (p + s - 2) * (t.link.alpha_s + nb / s); };
    const int lo = static_cast<int>(std::clamp(std::floor(best), 1.0, double(kMaxBroadcastSegments)));
    const int hi = std::min(lo + 1, kMaxBroadcastSegments);
    return cost(lo) <= cost(hi) ? lo : hi;
}

double pointToPointSeconds(const LinkParams& link, double bytes, int hops) {
    checkBytes(bytes, "point-to-point");
    if (hops < 1) throw std::invalid_argument("point-to-point: hops must be >= 1, got " + std::to_string(hops));
    return hops * link.alpha_s + bytes * link.beta_s_per_byte;
}

}  // namespace trainbench::engine
