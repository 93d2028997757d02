#include "ui/models/loadtestcurves.h"

#include <QStringList>

#include <algorithm>

#include "profiler/store/runattributes.h"

namespace trainbench::ui::loadtest {

namespace runattr = profiler::runattr;

std::optional<std::string> attribute(const Attributes& attributes, const std::string& key) {
    for (const auto& [k, v] : attributes)
        if (k == key) return v;
    return std::nullopt;
}

namespace {

// The server configuration's parts, each written with its format (%1: the recorded value).
struct LabelFormats {
    const char* batch;      // max_batch_size
    const char* timeout;    // batch_timeout_micros
    const char* instances;  // instances ("" : say "1 instance" / "N instances")
};

QString labelOf(const Attributes& a, const LabelFormats& f) {
    QStringList parts;
    if (auto v = attribute(a, runattr::kServePrecision)) parts << QString::fromStdString(*v);
    const auto batching = attribute(a, runattr::kServeEnableBatching);
    if (batching && (*batching == "0" || *batching == "false")) {
        parts << QStringLiteral("no batching");
    } else {
        if (auto v = attribute(a, runattr::kServeMaxBatchSize)) parts << QString::fromUtf8(f.batch).arg(QString::fromStdString(*v));
        if (auto v = attribute(a, runattr::kServeBatchTimeoutMicros))
            parts << QString::fromUtf8(f.timeout).arg(QString::fromStdString(*v));
    }
    if (auto v = attribute(a, runattr::kServeInstances)) {
        if (*f.instances) parts << QString::fromUtf8(f.instances).arg(QString::fromStdString(*v));
        else parts << (*v == "1" ? QStringLiteral("1 instance") : QStringLiteral("%1 instances").arg(QString::fromStdString(*v)));
    }
    if (parts.isEmpty()) return QStringLiteral("configuration not recorded");
    return parts.join(QStringLiteral(" · "));
}

}  // namespace

QString configurationLabel(const Attributes& a) { return labelOf(a, {"batch ≤ %1", "timeout %1 µs", ""}); }

QString compactConfigurationLabel(const Attributes& a) { return labelOf(a, {"b%1", "%1 µs", "×%1"}); }

QString modelLabel(const Attributes& a) {
    if (auto v = attribute(a, runattr::kServeSourceRun); v && !v->empty()) return QStringLiteral("run %1").arg(QString::fromStdString(*v));
    if (auto v = attribute(a, runattr::kServeModel)) return QString::fromStdString(*v);
    return {};
}

std::vector<QPointF> latencyCurve(const std::vector<profiler::LoadTestPoint>& points, Percentile p) {
    std::vector<QPointF> out;
    for (const auto& pt : points) {
        const auto& ms = p == Percentile::P50 ? pt.p50_ms : p == Percentile::P90 ? pt.p90_ms : pt.p99_ms;
        if (ms) out.emplace_back(pt.achieved_qps, *ms);
    }
    std::stable_sort(out.begin(), out.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
    return out;
}

std::vector<QPointF> secondSeries(const std::vector<profiler::LoadTestPoint>& points, SecondValue v) {
    std::vector<QPointF> out;
    double offset = 0.0;
    for (const auto& pt : points) {
        int64_t last = -1;
        int64_t lastSecond = -1;
        for (const auto& s : pt.seconds) lastSecond = std::max(lastSecond, s.second);
        for (const auto& s : pt.seconds) {
            last = std::max(last, s.second);
            const double x = offset + static_cast<double>(s.second);
            // A point's last second is partial (the point ended within it): its count is not a rate.
            const bool partial = s.second == lastSecond && pt.seconds.size() > 1;
            if (v == SecondValue::Qps) {
                if (!partial) out.emplace_back(x, static_cast<double>(s.completed));
            }
            else if (const auto& ms = v == SecondValue::P50 ? s.p50_ms : s.p99_ms)
                out.emplace_back(x, *ms);
        }
        offset += static_cast<double>(last + 1);
    }
    return out;
}

std::optional<double> latencyBoundMs(const Attributes& a) {
    const auto v = attribute(a, runattr::kLoadtestLatencyBoundMs);
    bool ok = false;
    const double ms = v ? QString::fromStdString(*v).toDouble(&ok) : 0.0;
    return ok && ms > 0 ? std::optional<double>(ms) : std::nullopt;
}

const profiler::LoadTestPoint* bestPoint(const std::vector<profiler::LoadTestPoint>& points, std::optional<double> p99BoundMs) {
    const auto meets = [&](const profiler::LoadTestPoint& p) { return p.p99_ms && *p.p99_ms <= *p99BoundMs; };
    const bool bounded = p99BoundMs && std::any_of(points.begin(), points.end(), meets);
    const profiler::LoadTestPoint* best = nullptr;
    for (const auto& p : points) {
        if (bounded && !meets(p)) continue;
        if (!best) {
            best = &p;
            continue;
        }
        const bool clean = p.errors == 0, bestClean = best->errors == 0;
        if ((clean && !bestClean) || (clean == bestClean && p.achieved_qps > best->achieved_qps)) best = &p;
    }
    return best;
}

double instancesPerQuery(const Attributes& a) {
    const auto v = attribute(a, runattr::kLoadtestInstancesPerQuery);
    bool ok = false;
    const double n = v ? QString::fromStdString(*v).toDouble(&ok) : 0.0;
    return ok && n > 0 ? n : 1.0;
}

std::optional<double> costPerMillion(const profiler::RunRow& run, double qps, double instancesPerQuery) {
    const auto perSecond = run.costPerSecond();
    if (!perSecond || qps <= 0.0 || instancesPerQuery <= 0.0) return std::nullopt;
    return *perSecond / (qps * instancesPerQuery) * 1e6;
}

}  // namespace trainbench::ui::loadtest
