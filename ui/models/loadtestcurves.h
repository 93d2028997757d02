#pragma once
// What the GUI draws of load tests (runs of kind "serve"): a run's configuration in words, its
// latency–throughput curve, its per-second series laid end to end, its best point and what a
// million predictions cost there. Pure data and arithmetic over the store's read-side values.
#include <QPointF>
#include <QString>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/store/loadtestpoint.h"
#include "profiler/store/runrow.h"

namespace trainbench::ui::loadtest {

using Attributes = std::vector<std::pair<std::string, std::string>>;

std::optional<std::string> attribute(const Attributes& attributes, const std::string& key);

// "fp32 · batch ≤ 32 · timeout 1000 µs · 2 instances", from the serve.* attributes; the parts
// the run did not record are left out ("configuration not recorded" when none is).
QString configurationLabel(const Attributes& attributes);
// The same, short enough for a chart's legend: "fp32 · b32 · 2000 µs · ×2".
QString compactConfigurationLabel(const Attributes& attributes);
// The model served: serve.source_run as "run N", else serve.model, else empty.
QString modelLabel(const Attributes& attributes);

enum class Percentile { P50, P90, P99 };
// (achieved QPS, latency ms) of every point that has the percentile, sorted by QPS.
std::vector<QPointF> latencyCurve(const std::vector<profiler::LoadTestPoint>& points, Percentile p);

// The per-second series of all points one after the other (point k's seconds follow point k-1's):
// x is seconds since the test began; y queries completed per second, or p50/p99 ms (seconds in
// which no query ended are left out). A point's last second is partial — the point ended within
// it — so its count is left out of the QPS series (it would draw a dip to nearly 0 between points).
enum class SecondValue { Qps, P50, P99 };
std::vector<QPointF> secondSeries(const std::vector<profiler::LoadTestPoint>& points, SecondValue v);

// The point with the highest achieved QPS (no errors preferred) whose p99 meets `p99BoundMs` when
// one is given and some point meets it; nullptr when there is no point.
const profiler::LoadTestPoint* bestPoint(const std::vector<profiler::LoadTestPoint>& points,
                                         std::optional<double> p99BoundMs = std::nullopt);
// loadtest.latency_bound_ms, when the load test recorded one.
std::optional<double> latencyBoundMs(const Attributes& attributes);

// loadtest.instances_per_query (examples per query), 1 when not recorded or not a number.
double instancesPerQuery(const Attributes& attributes);

// Dollars per million predictions at `qps` queries per second of `instancesPerQuery` examples
// each, from the run's price (runs.price_per_device_hour and host price); nullopt without one.
std::optional<double> costPerMillion(const profiler::RunRow& run, double qps, double instancesPerQuery = 1.0);

}  // namespace trainbench::ui::loadtest
