#include "engine/emulation/collectivenetwork.h"

namespace trainbench::engine {

CollectiveNetwork::CollectiveNetwork(const Topology& t, MessageSchedule& s)
    : chips_(t.chips()), cores_(t.on_chip ? t.on_chip->cores_per_chip : 1), extent_(t.dims) {
    int step = 1;
    for (int e : extent_) {
        stride_.push_back(step);
        step *= e;
    }
    for (int n = 0; n < chips_ * cores_; ++n) s.addNode();

    next_.assign(static_cast<size_t>(chips_) * extent_.size(), -1);
    previous_.assign(next_.size(), -1);
    for (int d = 0; d < dimensions(); ++d) {
        const int ext = extent(d);
        if (ext == 1) continue;
        // Ring and BidirectionalRing wrap by definition; a torus per its flag.
        const bool wraps = t.kind != TopologyKind::Torus || t.wrap[static_cast<size_t>(d)];
        const bool backwards = t.kind == TopologyKind::BidirectionalRing || t.kind == TopologyKind::Torus;
        if (t.kind == TopologyKind::Switch) break;
        for (int c = 0; c < chips_; ++c) {
            const int x = coordinate(c, d);
            const int base = c - x * stride(d);
            if (wraps || x + 1 < ext)
                next_[index(c, d)] = s.addLink(router(c), router(base + (x + 1) % ext * stride(d)), t.link);
            if (backwards && (wraps || x > 0))
                previous_[index(c, d)] = s.addLink(router(c), router(base + (x + ext - 1) % ext * stride(d)), t.link);
        }
    }
    if (t.kind == TopologyKind::Switch && chips_ > 1) {
        const int sw = s.addNode();
        const LinkParams downLink{0.0, t.link.beta_s_per_byte};
        for (int c = 0; c < chips_; ++c) {
            up_.push_back(s.addLink(router(c), sw, t.link));
            down_.push_back(s.addLink(sw, router(c), downLink));
        }
    }
    if (cores_ > 1) {
        nextCore_.assign(static_cast<size_t>(chips_ * cores_), -1);
        for (int c = 0; c < chips_; ++c)
            for (int k = 0; k < cores_; ++k)
                nextCore_[static_cast<size_t>(node(c, k))] = s.addLink(node(c, k), node(c, (k + 1) % cores_), t.on_chip->link);
    }
}

}  // namespace trainbench::engine
