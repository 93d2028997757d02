#include "ui/pages/dashboard/runhistory.h"

#include <algorithm>

#include "profiler/store/runattributes.h"

namespace trainbench::ui {

namespace runattr = profiler::runattr;

namespace {

// The x of a record at `step` and training time `wall`; cost needs a price (else 0 for every point).
double xAt(int64_t step, double wall, XAxis x, const profiler::RunRow& row) {
    if (x == XAxis::Step) return static_cast<double>(step);
    if (x == XAxis::Cost) return wall * row.costPerSecond().value_or(0.0);
    return wall;
}

std::optional<double> number(const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    try {
        return std::stod(*text);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

size_t RunHistory::apply(const RunUpdate& u) {
    row_ = u.row;
    if (u.reset) steps_.clear();
    const size_t first = steps_.size();
    steps_.insert(steps_.end(), u.newSteps.begin(), u.newSteps.end());
    evals_ = u.evals;
    attributes_ = u.attributes;
    verdict_ = u.verdict;
    points_ = u.loadTestPoints;
    servingVerdict_ = u.servingVerdict;
    replicaMeans_ = u.replicaMeans;
    return first;
}

QString RunHistory::rankNoun() const {
    if (row_.strategy == "pipeline") return QStringLiteral("stage");
    if (row_.strategy == "tensor") return QStringLiteral("device");
    if (row_.strategy == "multi_worker" || row_.strategy == "parameter_server") return QStringLiteral("worker");
    return QStringLiteral("replica");
}

std::vector<RankParts> RunHistory::rankParts() const {
    std::vector<RankParts> out;
    if (replicaMeans_.size() < 2) return out;
    const QString noun = rankNoun();
    for (const profiler::ReplicaMean& m : replicaMeans_)
        out.push_back({QStringLiteral("%1 %2").arg(noun).arg(m.rank), m.compute_seconds, m.comm_seconds, m.wait_seconds});
    return out;
}

std::optional<std::string> RunHistory::attribute(const std::string& key) const {
    for (const auto& [k, v] : attributes_)
        if (k == key) return v;
    return std::nullopt;
}

std::vector<QPointF> RunHistory::lossPoints(XAxis x, size_t from) const {
    std::vector<QPointF> p;
    p.reserve(steps_.size() - std::min(from, steps_.size()));
    for (size_t i = from; i < steps_.size(); ++i) p.emplace_back(xAt(steps_[i].step, steps_[i].wall_seconds, x, row_), steps_[i].loss);
    return p;
}

std::vector<QPointF> RunHistory::throughputPoints(XAxis x, size_t from) const {
    std::vector<QPointF> p;
    p.reserve(steps_.size() - std::min(from, steps_.size()));
    for (size_t i = from; i < steps_.size(); ++i) p.emplace_back(xAt(steps_[i].step, steps_[i].wall_seconds, x, row_), steps_[i].samples_per_second);
    return p;
}

std::vector<QPointF> RunHistory::accuracyPoints(XAxis x, const std::string& split) const {
    std::vector<QPointF> p;
    for (const auto& e : evals_)
        if (e.split == split) p.emplace_back(xAt(e.step, e.wall_seconds, x, row_), e.accuracy);
    return p;
}

std::vector<QPointF> RunHistory::evalLossPoints(XAxis x, const std::string& split) const {
    std::vector<QPointF> p;
    for (const auto& e : evals_)
        if (e.split == split) p.emplace_back(xAt(e.step, e.wall_seconds, x, row_), e.loss);
    return p;
}

BreakdownDataPtr RunHistory::breakdown() const {
    auto d = std::make_shared<BreakdownData>();
    const size_t n = steps_.size();
    d->steps.reserve(n);
    for (const profiler::StepPhase& phase : profiler::kStepPhases) {
        BreakdownCategory category{QString::fromLatin1(phase.name.data(), static_cast<qsizetype>(phase.name.size())), {}};
        category.seconds.reserve(n);
        bool any = false;
        for (const auto& s : steps_) {
            category.seconds.push_back(s.*phase.seconds);
            any = any || s.*phase.seconds != 0.0;
        }
        // A prediction has input, compute (forward) and output only: no empty optimizer bands.
        if (row_.kind == "predict" && !any) continue;
        d->categories.push_back(std::move(category));
    }
    for (const auto& s : steps_) d->steps.push_back(static_cast<double>(s.step));
    return d;
}

MemoryFootprint RunHistory::memory() const {
    MemoryFootprint m;
    static const std::pair<const char*, const char*> parts[] = {{runattr::kMemoryParamsBytes, "parameters"},
                                                                {runattr::kMemoryGradsBytes, "gradients"},
                                                                {runattr::kMemoryOptimizerBytes, "optimizer state"},
                                                                {runattr::kMemoryActivationBytes, "activations"}};
    for (const auto& [key, name] : parts)
        if (auto v = number(attribute(key))) m.parts.push_back({QString::fromLatin1(name), static_cast<int64_t>(*v)});
    if (auto v = number(attribute(runattr::kMemoryPeakRssBytes)); v && *v > 0) m.peakRssBytes = static_cast<int64_t>(*v);
    if (auto v = number(attribute(runattr::kMemoryDeviceBytes)); v && *v > 0) m.limitBytes = static_cast<int64_t>(*v);
    if (auto source = attribute(runattr::kMemoryDeviceSource))
        m.deviceName = *source == "device.memory_mb" ? QStringLiteral("device.memory_mb") : QString::fromStdString(*source);
    return m;
}

Progress RunHistory::progress() const {
    Progress p;
    if (!steps_.empty()) p.step = steps_.back().step;
    if (auto total = number(attribute(runattr::kPlanTotalSteps)); total && *total > 0) p.total = static_cast<int64_t>(*total);
    if (p.total <= 0) return p;
    p.fraction = std::clamp(static_cast<double>(p.step) / static_cast<double>(p.total), 0.0, 1.0);
    if (row_.status != profiler::RunStatus::Running || steps_.empty()) return p;
    // The recent pace: the last 50 steps' time, plus the evaluations and checkpoints they paid.
    const size_t window = std::min<size_t>(50, steps_.size());
    double seconds = 0;
    for (size_t i = steps_.size() - window; i < steps_.size(); ++i)
        seconds += steps_[i].step_seconds + steps_[i].eval_seconds + steps_[i].checkpoint_seconds;
    p.etaSeconds = seconds / static_cast<double>(window) * static_cast<double>(std::max<int64_t>(0, p.total - p.step));
    return p;
}

}  // namespace trainbench::ui
