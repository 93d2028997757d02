#include "engine/emulation/topology.h"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace trainbench::engine {
namespace {

const char* kindName(TopologyKind kind) {
    switch (kind) {
    case TopologyKind::Ring: return "ring";
    case TopologyKind::BidirectionalRing: return "bidirectional ring";
    case TopologyKind::Switch: return "switch";
    case TopologyKind::Torus: return "torus";
    }
    return "?";
}

void validateLink(const LinkParams& link, const std::string& where) {
    if (!std::isfinite(link.alpha_s) || link.alpha_s < 0.0)
        throw std::invalid_argument(where + ".alpha_s: latency must be finite and >= 0 s, got " +
                                    std::to_string(link.alpha_s));
    if (!std::isfinite(link.beta_s_per_byte) || link.beta_s_per_byte < 0.0)
        throw std::invalid_argument(where + ".beta_s_per_byte: must be finite and >= 0 s/byte, got " +
                                    std::to_string(link.beta_s_per_byte));
}

Topology flat(TopologyKind kind, int nodes, LinkParams link) {
    Topology t;
    t.kind = kind;
    t.dims = {nodes};
    t.link = link;
    validateTopology(t);
    return t;
}

}  // namespace

int Topology::chips() const {
    int n = 1;
    for (int d : dims) n *= d;
    return n;
}

int Topology::nodes() const { return chips() * (on_chip ? on_chip->cores_per_chip : 1); }

std::string Topology::describe() const {
    std::string s = kindName(kind);
    s += ' ';
    static const char kAxis[] = {'x', 'y', 'z'};
    std::string wrapped;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i > 0) s += 'x';
        s += std::to_string(dims[i]);
        if (kind == TopologyKind::Torus && i < wrap.size() && wrap[i] && i < 3)
            wrapped += std::string(wrapped.empty() ? "" : ",") + kAxis[i];
    }
    if (kind == TopologyKind::Torus) s += wrapped.empty() ? " (no wrap)" : " (wrap " + wrapped + ")";
    if (on_chip) s += " + " + std::to_string(on_chip->cores_per_chip) + " cores/chip";
    return s;
}

Topology ringTopology(int nodes, LinkParams link) { return flat(TopologyKind::Ring, nodes, link); }

Topology bidirectionalRingTopology(int nodes, LinkParams link) {
    return flat(TopologyKind::BidirectionalRing, nodes, link);
}

Topology switchTopology(int nodes, LinkParams link) { return flat(TopologyKind::Switch, nodes, link); }

Topology torusTopology(std::vector<int> dims, std::vector<bool> wrap, LinkParams link) {
    Topology t;
    t.kind = TopologyKind::Torus;
    t.dims = std::move(dims);
    t.wrap = std::move(wrap);
    t.link = link;
    validateTopology(t);
    return t;
}

Topology withOnChip(Topology chips, int cores_per_chip, LinkParams link) {
    chips.on_chip = OnChipLevel{cores_per_chip, link};
    validateTopology(chips);
    return chips;
}

void validateTopology(const Topology& t) {
    const std::string what = std::string("topology (") + kindName(t.kind) + ")";
    if (t.kind == TopologyKind::Torus) {
        if (t.dims.empty() || t.dims.size() > 3)
            throw std::invalid_argument(what + ".dims: a torus has 1 to 3 dimensions, got " +
                                        std::to_string(t.dims.size()));
        if (t.wrap.size() != t.dims.size())
            throw std::invalid_argument(what + ".wrap: one flag per dimension expected (" +
                                        std::to_string(t.dims.size()) + "), got " + std::to_string(t.wrap.size()));
    } else {
        if (t.dims.size() != 1)
            throw std::invalid_argument(what + ".dims: one node count expected, got " +
                                        std::to_string(t.dims.size()) + " values");
        if (!t.wrap.empty()) throw std::invalid_argument(what + ".wrap: only a torus has wrap-around flags");
    }
    for (size_t i = 0; i < t.dims.size(); ++i)
        if (t.dims[i] < 1)
            throw std::invalid_argument(what + ".dims[" + std::to_string(i) + "]: must be >= 1, got " +
                                        std::to_string(t.dims[i]));
    // Node ids are ints and the simulator counts messages per node: keep well inside both.
    long long chips = 1;
    for (int d : t.dims) chips *= d;
    if (chips > (1 << 20)) throw std::invalid_argument(what + ".dims: more than 2^20 chips");
    validateLink(t.link, what + ".link");
    if (t.on_chip) {
        if (t.on_chip->cores_per_chip < 1 || t.on_chip->cores_per_chip > 64)
            throw std::invalid_argument(what + ".on_chip.cores_per_chip: must be 1..64, got " +
                                        std::to_string(t.on_chip->cores_per_chip));
        validateLink(t.on_chip->link, what + ".on_chip.link");
    }
}

}  // namespace trainbench::engine
