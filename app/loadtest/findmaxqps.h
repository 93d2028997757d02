#pragma once
// The highest Server-scenario QPS that meets the latency bound, searched as MLPerf LoadGen's
// FindPeakPerformance mode does: bracket (double the rate until a run fails; halve it until one
// passes, when the first fails), then bisect the bracket. Every probe is a full Server run.
#include <functional>
#include <string>
#include <vector>

#include "app/loadtest/scenarioresult.h"

namespace trainbench::app::loadtest {

struct QpsProbe {
    double qps = 0;
    bool met = false;  // bound met, no failure, and the client kept up
    ScenarioResult result;
};

struct QpsSearch {
    double bestQps = 0;  // the highest probe that met the bound; 0 when none did
    std::vector<QpsProbe> probes;  // in the order they ran
    bool clientBound = false;      // a probe found the client to be the bottleneck: the search stopped there
    std::string note;              // why the search ended
};

// `probe` runs the Server scenario at a rate. Stops when the bracket [lo, hi) is narrower than
// `precision` x lo, or after `maxProbes` probes.
QpsSearch findMaxQps(double startQps, double precision, int maxProbes,
                     const std::function<ScenarioResult(double qps)>& probe);

}  // namespace trainbench::app::loadtest
