#include "app/plan/servingplan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

namespace trainbench::app {

namespace {

using engine::serving::ServingSimResult;

class Evaluator {
public:
    explicit Evaluator(const ServingPlanRequest& r) : r_(r) {}

    const ServingPoint& at(size_t target, size_t i, size_t b, size_t t) {
        const auto key = std::make_tuple(target, i, b, t);
        if (auto it = cache_.find(key); it != cache_.end()) return it->second;
        const ServingTarget& tg = r_.targets[target];
        engine::serving::ServingSimulation sim;
        sim.qps = r_.qps;
        sim.queries = r_.queries;
        sim.seed = r_.seed;
        sim.instances = r_.grid.instances[i];
        sim.batching.max_batch_size = r_.grid.batches[b];
        sim.batching.batch_timeout_micros = r_.grid.timeouts_us[t];
        // Every batch the scheduler may form can wait: the queue bounds memory, not latency here.
        sim.batching.max_enqueued_batches = std::max<int64_t>(10, sim.instances * 4);
        sim.batchSeconds = tg.batchSeconds;
        sim.request_overhead_seconds = r_.request_overhead_seconds;
        ServingPoint p;
        p.config = {target, sim.instances, sim.batching.max_batch_size, sim.batching.batch_timeout_micros};
        p.sim = engine::serving::simulateServing(sim);
        p.meets = p.sim.refused == 0 && p.sim.p99 <= r_.p99_seconds;
        p.usd_per_million = costPerMillion(tg, sim.instances);
        return cache_.emplace(key, p).first->second;
    }
    double costPerMillion(const ServingTarget& t, int64_t instances) const {
        return static_cast<double>(instances) * t.price_per_hour / 3600.0 / r_.qps * 1e6;
    }
    int64_t tried() const { return static_cast<int64_t>(cache_.size()); }
    std::vector<ServingPoint> meeting() const {
        std::vector<ServingPoint> out;
        for (const auto& [key, p] : cache_)
            if (p.meets) out.push_back(p);
        return out;
    }

private:
    const ServingPlanRequest& r_;
    std::map<std::tuple<size_t, size_t, size_t, size_t>, ServingPoint> cache_;
};

// How far a point is from meeting the bound, for the hill-climb: its p99 when nothing was refused,
// else beyond any p99 by how much was refused.
double badness(const ServingPoint& p) {
    if (p.sim.refused > 0)
        return 1e6 + static_cast<double>(p.sim.refused) / static_cast<double>(p.sim.refused + p.sim.completed);
    return p.sim.p99;
}

// Examples per second one instance gets through at the best batch size of the grid.
double bestThroughput(const ServingTarget& t, const ServingGrid& g) {
    double best = 0.0;
    for (int64_t b : g.batches) best = std::max(best, static_cast<double>(b) / t.batchSeconds(b));
    return best;
}

void quickTarget(const ServingPlanRequest& r, size_t target, Evaluator& eval, double& bestCost) {
    const ServingTarget& tg = r.targets[target];
    const ServingGrid& g = r.grid;
    const double perInstance = bestThroughput(tg, g);
    for (size_t i = 0; i < g.instances.size(); ++i) {
        const int64_t n = g.instances[i];
        if (static_cast<double>(n) * perInstance < r.qps) continue;  // cannot carry the load at any batch
        if (eval.costPerMillion(tg, n) >= bestCost) return;          // dearer than what is found
        // Start from the smallest batch whose throughput carries the load with a margin, no timeout.
        size_t b = 0;
        while (b + 1 < g.batches.size() &&
               static_cast<double>(n) * static_cast<double>(g.batches[b]) / tg.batchSeconds(g.batches[b]) < 1.25 * r.qps)
            ++b;
        size_t t = 0;
        for (;;) {
            const ServingPoint& here = eval.at(target, i, b, t);
            if (here.meets) {
                bestCost = std::min(bestCost, here.usd_per_million);
                return;
            }
            size_t nb = b, nt = t;
            double best = badness(here);
            const auto consider = [&](size_t bb, size_t tt) {
                const double v = badness(eval.at(target, i, bb, tt));
                if (v < best) best = v, nb = bb, nt = tt;
            };
            if (b > 0) consider(b - 1, t);
            if (b + 1 < g.batches.size()) consider(b + 1, t);
            if (t > 0) consider(b, t - 1);
            if (t + 1 < g.timeouts_us.size()) consider(b, t + 1);
            if (nb == b && nt == t) break;  // a local best that misses the bound: more instances
            b = nb;
            t = nt;
        }
    }
}

}  // namespace

double splitCostPerMillion(double fraction, double batchUsdPerMillion, double onlineUsdPerMillion) {
    return fraction * batchUsdPerMillion + (1.0 - fraction) * onlineUsdPerMillion;
}

ServingPlan planServing(const ServingPlanRequest& r) {
    if (!(r.qps > 0)) throw std::invalid_argument("--qps must be positive");
    if (!(r.p99_seconds > 0)) throw std::invalid_argument("--p99 must be positive");
    if (r.grid.instances.empty() || r.grid.batches.empty() || r.grid.timeouts_us.empty())
        throw std::invalid_argument("the configuration grid is empty");
    Evaluator eval(r);
    ServingPlan plan;
    std::vector<size_t> searchable;
    for (size_t i = 0; i < r.targets.size(); ++i)
        if (r.targets[i].why_not.empty()) searchable.push_back(i);
    const ServingGrid& g = r.grid;
    plan.grid_points = static_cast<int64_t>(searchable.size() * g.instances.size() * g.batches.size() * g.timeouts_us.size());
    if (r.exhaustive) {
        for (size_t target : searchable)
            for (size_t i = 0; i < g.instances.size(); ++i)
                for (size_t b = 0; b < g.batches.size(); ++b)
                    for (size_t t = 0; t < g.timeouts_us.size(); ++t) eval.at(target, i, b, t);
    } else {
        // Cheapest possible first: every instance busy at its best batch's throughput.
        std::vector<std::pair<double, size_t>> order;
        for (size_t target : searchable) {
            const ServingTarget& tg = r.targets[target];
            // A single query alone cannot be faster than one batch of one: past the bound, nothing can meet it.
            if (tg.batchSeconds(g.batches.front()) + r.request_overhead_seconds > r.p99_seconds) continue;
            order.emplace_back(tg.price_per_hour / 3600.0 / bestThroughput(tg, g) * 1e6, target);
        }
        std::sort(order.begin(), order.end());
        double bestCost = std::numeric_limits<double>::infinity();
        for (const auto& [bound, target] : order) {
            if (bound >= bestCost) break;
            quickTarget(r, target, eval, bestCost);
        }
    }
    plan.points_tried = eval.tried();
    plan.ranked = eval.meeting();
    std::sort(plan.ranked.begin(), plan.ranked.end(), [](const ServingPoint& a, const ServingPoint& b) {
        if (a.usd_per_million != b.usd_per_million) return a.usd_per_million < b.usd_per_million;
        return a.sim.p99 < b.sim.p99;
    });
    return plan;
}

}  // namespace trainbench::app
