#include "app/loadtest/findmaxqps.h"

#include "profiler/format/numberformat.h"

namespace trainbench::app::loadtest {

namespace {
std::string qpsText(double qps) { return profiler::fmtFixed(qps, 1); }
}  // namespace

QpsSearch findMaxQps(double startQps, double precision, int maxProbes,
                     const std::function<ScenarioResult(double qps)>& probe) {
    QpsSearch search;
    // A probe's verdict; false also when the client could not keep up, which ends the search.
    const auto run = [&](double qps) {
        QpsProbe p;
        p.qps = qps;
        p.result = probe(qps);
        p.met = p.result.boundMet && !p.result.client.clientBound;
        if (p.result.client.clientBound) {
            search.clientBound = true;
            search.note = "stopped at " + qpsText(qps) + " QPS: the client was the bottleneck (" + p.result.client.reason + ")";
        }
        search.probes.push_back(p);
        return p.met;
    };
    const auto budgetLeft = [&] { return static_cast<int>(search.probes.size()) < maxProbes && !search.clientBound; };

    double lo = 0, hi = 0;
    if (run(startQps)) {
        lo = startQps;
        for (double q = startQps * 2; budgetLeft(); q *= 2) {
            if (!run(q)) {
                hi = q;
                break;
            }
            lo = q;
        }
    } else {
        hi = startQps;
        for (double q = startQps / 2; budgetLeft(); q /= 2) {
            if (run(q)) {
                lo = q;
                break;
            }
            hi = q;
        }
    }
    if (lo > 0 && hi > 0)
        while (hi - lo > precision * lo && budgetLeft()) {
            const double mid = (lo + hi) / 2;
            (run(mid) ? lo : hi) = mid;
        }
    search.bestQps = lo;
    if (search.note.empty()) {
        if (lo == 0) search.note = "no probe met the bound (the lowest tried was " + qpsText(hi) + " QPS)";
        else if (hi == 0) search.note = "every probe met the bound: raise the probe budget to find the limit";
        else if (hi - lo > precision * lo) search.note = "the probe budget ran out before the bracket narrowed";
        else search.note = "bracket [" + qpsText(lo) + ", " + qpsText(hi) + ") QPS";
    }
    return search;
}

}  // namespace trainbench::app::loadtest
