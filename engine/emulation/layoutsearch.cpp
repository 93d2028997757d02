#include "engine/emulation/layoutsearch.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace trainbench::engine {

namespace {

std::vector<int64_t> searchDivisors(int64_t n) {
    std::vector<int64_t> d;
    for (int64_t i = 1; i * i <= n; ++i)
        if (n % i == 0) {
            d.push_back(i);
            if (i != n / i) d.push_back(n / i);
        }
    std::sort(d.begin(), d.end());
    return d;
}

void searchCheckCluster(const GpuCluster& cluster, int64_t global_batch) {
    if (cluster.devices < 1) throw std::invalid_argument("devices: expected at least 1, got " + std::to_string(cluster.devices));
    if (global_batch < 1) throw std::invalid_argument("global batch: expected at least 1, got " + std::to_string(global_batch));
    if (cluster.device.kind != DeviceKind::Gpu || !cluster.device.links)
        throw std::invalid_argument("layout planning needs a GPU with NVLink figures; " + cluster.device.id + " is a " +
                                    deviceKindName(cluster.device.kind));
}

double searchScore(const LayoutEstimate& e, LayoutOrder order) { return order == LayoutOrder::Cost ? e.usd_per_step : e.step_s; }

// Fitting layouts first by score; then the rest by how much memory they lack.
std::tuple<int, double> searchKey(const LayoutEstimate& e, LayoutOrder order) {
    return e.fits ? std::tuple<int, double>{0, searchScore(e, order)} : std::tuple<int, double>{1, e.memoryBytes()};
}

void searchAddRejection(std::vector<RejectedLayout>& out, std::map<std::string, size_t>& index, const Layout& l,
                        const std::string& why) {
    if (const auto it = index.find(why); it != index.end()) {
        ++out[it->second].count;
        return;
    }
    index.emplace(why, out.size());
    out.push_back({l, why, 1, 0.0});
}

LayoutSearchResult searchCollect(std::vector<RejectedLayout> structural, const std::vector<LayoutEstimate>& estimates,
                                 LayoutOrder order) {
    LayoutSearchResult r;
    std::vector<RejectedLayout> memory;
    for (const LayoutEstimate& e : estimates) {
        if (e.fits)
            r.ranked.push_back(e);
        else
            memory.push_back({e.layout, e.why_not, 1, e.memoryBytes()});
    }
    std::stable_sort(r.ranked.begin(), r.ranked.end(),
                     [&](const LayoutEstimate& a, const LayoutEstimate& b) { return searchScore(a, order) < searchScore(b, order); });
    std::stable_sort(memory.begin(), memory.end(),
                     [](const RejectedLayout& a, const RejectedLayout& b) { return a.memory_bytes < b.memory_bytes; });
    r.rejected = std::move(memory);
    r.rejected.insert(r.rejected.end(), structural.begin(), structural.end());
    r.evaluated = static_cast<int64_t>(estimates.size());
    return r;
}

}  // namespace

std::vector<Layout> enumerateLayouts(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                                     const LayoutSpace& space, std::vector<RejectedLayout>* rejected) {
    searchCheckCluster(cluster, global_batch);
    std::vector<Layout> out;
    std::vector<RejectedLayout> local;
    std::map<std::string, size_t> index;
    for (int64_t t : searchDivisors(cluster.devices)) {
        if (space.tensor_within_node && t > cluster.devices_per_node) continue;
        for (int64_t p : searchDivisors(cluster.devices / t)) {
            const int64_t d = cluster.devices / (t * p);
            Layout base;
            base.data = static_cast<int>(d);
            base.pipeline = static_cast<int>(p);
            base.tensor = static_cast<int>(t);
            // A mesh that cannot split the model or the batch is one rejection, whatever its micro-batches.
            if (const std::string problem = layoutProblem(costs, global_batch, cluster, base); !problem.empty()) {
                searchAddRejection(local, index, base, problem);
                continue;
            }
            for (int64_t b : searchDivisors(global_batch / d)) {
                if (space.max_micro_batch > 0 && b > space.max_micro_batch) break;
                for (Recompute r : space.recompute)
                    for (int v = 1; v <= std::max(1, space.max_interleave); ++v) {
                        Layout l = base;
                        l.micro_batch = b;
                        l.recompute = r;
                        l.interleave = v;
                        if (v > 1 && p == 1) break;
                        if (!layoutProblem(costs, global_batch, cluster, l).empty()) {
                            // The mesh and micro-batch are usable (checked above): only the chunks are not.
                            searchAddRejection(local, index, l,
                                               "interleaving needs micro-batches a multiple of p and chunks that divide a "
                                               "stage's layers");
                            continue;
                        }
                        out.push_back(l);
                    }
            }
        }
    }
    if (rejected) *rejected = std::move(local);
    return out;
}

LayoutSearchResult searchLayoutsExhaustive(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                                           const LayoutSpace& space, const LayoutAssumptions& assumptions, LayoutOrder order) {
    std::vector<RejectedLayout> structural;
    const std::vector<Layout> layouts = enumerateLayouts(costs, global_batch, cluster, space, &structural);
    if (layouts.empty()) {
        std::string why = "no layout of " + std::to_string(cluster.devices) + " devices can split " +
                          (costs.shape.name.empty() ? std::string("the model") : costs.shape.name) + " at batch " +
                          std::to_string(global_batch);
        for (const RejectedLayout& r : structural) why += "; " + r.why;
        throw std::invalid_argument(why);
    }
    std::vector<LayoutEstimate> estimates;
    estimates.reserve(layouts.size());
    for (const Layout& l : layouts) estimates.push_back(estimateLayout(costs, global_batch, cluster, l, assumptions));
    LayoutSearchResult r = searchCollect(std::move(structural), estimates, order);
    r.candidates = static_cast<int64_t>(layouts.size());
    return r;
}

namespace {

// Neighbours of a layout along one coordinate, structurally valid ones only.
std::vector<Layout> searchNeighbours(const Layout& l, const TransformerCosts& costs, int64_t batch, const GpuCluster& cluster,
                                     const LayoutSpace& space) {
    std::vector<Layout> out;
    auto push = [&](Layout n) {
        if (n == l) return;
        if (space.tensor_within_node && n.tensor > cluster.devices_per_node) return;
        if (space.max_micro_batch > 0 && n.micro_batch > space.max_micro_batch) return;
        if (n.interleave > std::max(1, space.max_interleave)) return;
        if (layoutProblem(costs, batch, cluster, n).empty()) out.push_back(n);
    };
    auto step = [](const std::vector<int64_t>& values, int64_t current, int dir) -> int64_t {
        auto it = std::lower_bound(values.begin(), values.end(), current);
        if (dir < 0) return it == values.begin() ? current : *(it - 1);
        if (it != values.end() && *it == current) ++it;
        return it == values.end() ? current : *it;
    };
    const std::vector<int64_t> tensors = searchDivisors(cluster.devices);
    for (int dir : {-1, 1}) {
        // Tensor degree: keep the stages, the data degree takes the rest; micro-batch back to 1 if needed.
        Layout n = l;
        n.tensor = static_cast<int>(step(tensors, l.tensor, dir));
        if ((cluster.devices % (static_cast<int64_t>(n.tensor) * n.pipeline)) == 0) {
            n.data = cluster.devices / (n.tensor * n.pipeline);
            if (batch % n.data == 0 && (batch / n.data) % n.micro_batch != 0) n.micro_batch = 1;
            push(n);
        }
        // Pipeline degree against the data degree, the tensor degree kept.
        n = l;
        n.pipeline = static_cast<int>(step(searchDivisors(cluster.devices / l.tensor), l.pipeline, dir));
        n.data = cluster.devices / (n.tensor * n.pipeline);
        if (batch % n.data == 0 && (batch / n.data) % n.micro_batch != 0) n.micro_batch = 1;
        if (n.pipeline == 1) n.interleave = 1;
        push(n);
        // Pipeline degree against the tensor degree, the data degree kept.
        n = l;
        n.pipeline = static_cast<int>(step(searchDivisors(cluster.devices / l.data), l.pipeline, dir));
        n.tensor = cluster.devices / (n.data * n.pipeline);
        if (n.pipeline == 1) n.interleave = 1;
        push(n);
        n = l;
        n.micro_batch = step(searchDivisors(batch / l.data), l.micro_batch, dir);
        push(n);
    }
    // The small coordinates take every value: a schedule's memory is not monotonic in its chunks.
    for (int v = 1; v <= std::max(1, space.max_interleave); ++v) {
        Layout n = l;
        n.interleave = v;
        push(n);
    }
    for (Recompute r : space.recompute) {
        Layout n = l;
        n.recompute = r;
        push(n);
    }
    return out;
}

}  // namespace

LayoutSearchResult searchLayoutsFast(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                                     const LayoutSpace& space, const LayoutAssumptions& assumptions, LayoutOrder order) {
    searchCheckCluster(cluster, global_batch);
    std::vector<RejectedLayout> structural;
    const int64_t candidates = static_cast<int64_t>(enumerateLayouts(costs, global_batch, cluster, space, &structural).size());
    if (candidates == 0) return searchLayoutsExhaustive(costs, global_batch, cluster, space, assumptions, order);  // throws why

    std::map<std::string, LayoutEstimate> seen;  // by Layout::text()
    auto evaluate = [&](const Layout& l) -> const LayoutEstimate& {
        const std::string key = l.text();
        auto it = seen.find(key);
        if (it == seen.end()) it = seen.emplace(key, estimateLayout(costs, global_batch, cluster, l, assumptions)).first;
        return it->second;
    };
    const double el = assumptions.precision == Precision::Fp32 || assumptions.precision == Precision::Tf32 ? 4.0 : 2.0;
    const double stateBytes = costs.params() * (2.0 * el + assumptions.optimizer_bytes_per_param);
    for (int64_t t : searchDivisors(cluster.devices)) {
        if (t > cluster.devices_per_node) break;
        for (int64_t p : searchDivisors(cluster.devices / t)) {
            // The fewest stages whose weights, gradients and optimizer state alone fit.
            if (stateBytes / static_cast<double>(t * p) > cluster.device.memory_bytes) continue;
            Layout start;
            start.tensor = static_cast<int>(t);
            start.pipeline = static_cast<int>(p);
            start.data = static_cast<int>(cluster.devices / (t * p));
            if (!layoutProblem(costs, global_batch, cluster, start).empty()) continue;
            // One descent per recomputation option: they trade memory for time, and a descent that
            // starts from one rarely crosses to a layout that needs another.
            for (Recompute r : space.recompute) {
                start.recompute = r;
                Layout current = start;
                for (;;) {
                    const LayoutEstimate& here = evaluate(current);
                    auto best = searchKey(here, order);
                    Layout next = current;
                    for (const Layout& n : searchNeighbours(current, costs, global_batch, cluster, space)) {
                        const auto key = searchKey(evaluate(n), order);
                        if (key < best) {
                            best = key;
                            next = n;
                        }
                    }
                    if (next == current) break;
                    current = next;
                }
            }
            break;
        }
    }
    // No start holds even the weights and optimizer state: estimate everything, so that the
    // rejections say by how much each layout misses.
    if (seen.empty()) return searchLayoutsExhaustive(costs, global_batch, cluster, space, assumptions, order);
    std::vector<LayoutEstimate> estimates;
    for (const auto& [key, e] : seen) estimates.push_back(e);
    LayoutSearchResult r = searchCollect(std::move(structural), estimates, order);
    r.candidates = candidates;
    return r;
}

std::vector<LayoutEstimate> splitsThatFit(const TransformerCosts& costs, int64_t replica_batch, const GpuCluster& cluster,
                                          const LayoutAssumptions& assumptions, int max_devices) {
    std::vector<LayoutEstimate> out;
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
        std::optional<LayoutEstimate> best;
        for (int64_t n : searchDivisors(static_cast<int64_t>(costs.shape.layers) * costs.shape.heads)) {
            if (n > max_devices) break;
            // Tensor degrees within a node first (the largest such one), then pipeline stages.
            std::vector<int64_t> tensors = searchDivisors(n);
            std::sort(tensors.begin(), tensors.end(), [&](int64_t a, int64_t b) {
                const bool aIn = a <= cluster.devices_per_node, bIn = b <= cluster.devices_per_node;
                return aIn != bIn ? aIn : (aIn ? a > b : a < b);
            });
            for (int64_t t : tensors) {
                GpuCluster c = cluster;
                c.devices = static_cast<int>(n);
                Layout l;
                l.tensor = static_cast<int>(t);
                l.pipeline = static_cast<int>(n / t);
                l.recompute = r;
                if (!layoutProblem(costs, replica_batch, c, l).empty()) continue;
                LayoutEstimate e = estimateLayout(costs, replica_batch, c, l, assumptions);
                if (e.fits) {
                    best = e;
                    break;
                }
            }
            if (best) break;
        }
        if (best) out.push_back(*best);
    }
    return out;
}

}  // namespace trainbench::engine
