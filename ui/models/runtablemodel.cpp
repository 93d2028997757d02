#include "ui/models/runtablemodel.h"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <cmath>
#include <map>

#include "profiler/grouping/configkeys.h"
#include "ui/models/format.h"

namespace trainbench::ui {

namespace {

QString text(const std::string& s) { return QString::fromStdString(s); }
QString text(const std::optional<std::string>& s) { return s ? QString::fromStdString(*s) : QString(); }

QString statusText(profiler::RunStatus status) { return text(std::string(profiler::runStatusName(status))); }

bool failedLike(profiler::RunStatus s) {
    return s == profiler::RunStatus::Failed || s == profiler::RunStatus::Interrupted;
}

struct Stats {
    int n = 0;
    double mean = 0, sd = 0;
};
template <class Get>
Stats statsOf(const RunList& list, const std::vector<size_t>& members, Get get) {
    Stats s;
    std::vector<double> v;
    for (size_t i : members)
        if (auto x = get(list.runs[i])) v.push_back(static_cast<double>(*x));
    s.n = static_cast<int>(v.size());
    if (v.empty()) return s;
    for (double x : v) s.mean += x;
    s.mean /= static_cast<double>(v.size());
    for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
    s.sd = v.size() > 1 ? std::sqrt(s.sd / static_cast<double>(v.size() - 1)) : 0.0;
    return s;
}

}  // namespace

RunTableModel::RunTableModel(QObject* parent) : QAbstractItemModel(parent) {}

std::vector<RunTableModel::Group> RunTableModel::groupsOf(const RunList& list) const {
    std::vector<Group> groups;
    if (!groupBySeed_) {
        groups.reserve(list.runs.size());
        for (size_t i = 0; i < list.runs.size(); ++i)
            groups.push_back({"#" + std::to_string(list.runs[i].id.value), {i}});
        return groups;
    }
    std::map<std::string, size_t> byKey;
    for (size_t i = 0; i < list.runs.size(); ++i) {
        std::string key = profiler::seedGroupKey(list.runs[i]);
        if (key.empty()) key = "#" + std::to_string(list.runs[i].id.value);
        auto [it, inserted] = byKey.emplace(key, groups.size());
        if (inserted) groups.push_back({key, {}});
        groups[it->second].members.push_back(i);
    }
    return groups;
}

std::vector<qint64> RunTableModel::idsOf(const RunList& list, const std::vector<Group>& groups) {
    std::vector<qint64> ids;
    for (const Group& g : groups) {
        ids.push_back(-1);  // separates groups
        for (size_t i : g.members) ids.push_back(list.runs[i].id.value);
    }
    return ids;
}

void RunTableModel::setRuns(const RunListPtr& runs) {
    if (!runs) return;
    std::vector<Group> next = groupsOf(*runs);
    if (!runs_) {
        beginResetModel();
        runs_ = runs;
        groups_ = std::move(next);
        endResetModel();
        return;
    }
    const std::vector<qint64> before = idsOf(*runs_, groups_), after = idsOf(*runs, next);
    // New runs are listed first: when the old rows are the tail of the new ones, insert the head.
    const bool tail = after.size() >= before.size() && std::equal(before.begin(), before.end(),
                                                                   after.end() - static_cast<ptrdiff_t>(before.size()));
    if (!tail) {
        beginResetModel();
        runs_ = runs;
        groups_ = std::move(next);
        endResetModel();
        return;
    }
    const int added = static_cast<int>(next.size() - groups_.size());
    if (added > 0) beginInsertRows({}, 0, added - 1);
    runs_ = runs;
    groups_ = std::move(next);
    if (added > 0) endInsertRows();
    if (!groups_.empty()) {
        emit dataChanged(index(0, 0), index(static_cast<int>(groups_.size()) - 1, ColumnCount - 1));
        for (int g = 0; g < static_cast<int>(groups_.size()); ++g) {
            const int children = rowCount(index(g, 0));
            if (children > 0) emit dataChanged(index(0, 0, index(g, 0)), index(children - 1, ColumnCount - 1, index(g, 0)));
        }
    }
}

void RunTableModel::setGroupBySeed(bool on) {
    if (on == groupBySeed_) return;
    beginResetModel();
    groupBySeed_ = on;
    groups_ = runs_ ? groupsOf(*runs_) : std::vector<Group>{};
    endResetModel();
}

const profiler::RunRow* RunTableModel::runAt(const QModelIndex& index) const {
    if (!index.isValid() || !runs_) return nullptr;
    if (index.internalId() == kTopLevel) {
        const Group& g = groups_[static_cast<size_t>(index.row())];
        return g.members.size() == 1 ? &runs_->runs[g.members.front()] : nullptr;
    }
    const Group& g = groups_[static_cast<size_t>(index.internalId())];
    return &runs_->runs[g.members[static_cast<size_t>(index.row())]];
}

QModelIndex RunTableModel::indexOfRun(qint64 id) const {
    if (!runs_) return {};
    for (size_t g = 0; g < groups_.size(); ++g) {
        const auto& m = groups_[g].members;
        for (size_t k = 0; k < m.size(); ++k) {
            if (runs_->runs[m[k]].id.value != id) continue;
            if (m.size() == 1) return index(static_cast<int>(g), 0);
            return index(static_cast<int>(k), 0, index(static_cast<int>(g), 0));
        }
    }
    return {};
}

QModelIndex RunTableModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount) return {};
    if (!parent.isValid()) {
        if (static_cast<size_t>(row) >= groups_.size()) return {};
        return createIndex(row, column, kTopLevel);
    }
    if (parent.internalId() != kTopLevel || parent.column() != 0) return {};
    const Group& g = groups_[static_cast<size_t>(parent.row())];
    if (g.members.size() < 2 || static_cast<size_t>(row) >= g.members.size()) return {};
    return createIndex(row, column, static_cast<quintptr>(parent.row()));
}

QModelIndex RunTableModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == kTopLevel) return {};
    return createIndex(static_cast<int>(child.internalId()), 0, kTopLevel);
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return static_cast<int>(groups_.size());
    if (parent.internalId() != kTopLevel || parent.column() != 0) return 0;
    const Group& g = groups_[static_cast<size_t>(parent.row())];
    return g.members.size() >= 2 ? static_cast<int>(g.members.size()) : 0;
}

int RunTableModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    static const char* names[ColumnCount] = {"Name", "Status", "Kind", "Strategy", "Devices", "Global batch",
                                             "Final accuracy", "Time to target", "Throughput", "Cost",
                                             "Verdict", "Started"};
    static const char* tips[ColumnCount] = {
        "The run's name (from the experiment file)",
        "running, completed, stopped, failed, or interrupted (its process ended without finishing)",
        "train, predict (batch prediction) or serve (a load test of a server)",
        "How the batch is spread: single, mirrored, multi_worker, parameter_server",
        "Devices × replicas the run trained on",
        "Examples per optimizer step, over all replicas",
        "Test accuracy at the last evaluation",
        "Training time until the target accuracy was first reached (evaluations excluded)",
        "Training samples per second in steady state (the first 20 steps skipped); a prediction's examples per "
        "second; a load test's highest achieved queries per second and the p99 latency there",
        "Device-hours × price; shown only when a price is recorded for the run's devices",
        "What bounds the run: input, compute, memory, communication, or balanced (severity in brackets)",
        "When the run started (local time)"};
    if (role == Qt::DisplayRole) return tr(names[section]);
    if (role == Qt::ToolTipRole) return tr(tips[section]);
    return {};
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !runs_) return {};
    if (const profiler::RunRow* run = runAt(index)) return runData(*run, index.column(), role);
    return groupData(groups_[static_cast<size_t>(index.row())], index.column(), role);
}

QVariant RunTableModel::runData(const profiler::RunRow& r, int column, int role) const {
    if (role == RunIdRole) return QVariant::fromValue<qint64>(r.id.value);
    if (role == RunIdsRole) return QVariant::fromValue(QList<qint64>{r.id.value});
    if (role == IsGroupRole) return false;
    if (role == Qt::ForegroundRole && column == Status) {
        if (failedLike(r.status)) return QBrush(QColor(0xd0, 0x30, 0x30));
        if (r.status == profiler::RunStatus::Running) return QBrush(QColor(0x20, 0x80, 0xd0));
        return {};
    }
    if (role == Qt::ToolTipRole) {
        if (column == Status && r.message) return text(r.message);
        if (column == Name)
            return tr("Run %1%2").arg(r.id.value).arg(r.experiment_file ? tr(" from %1").arg(text(r.experiment_file))
                                                                         : QString());
        if (column == Cost) {
            if (!r.costPerSecond()) return tr("No price is recorded for %1").arg(text(r.devices));
            return tr("%1 × %2 at $%3 per device-hour%4, over training and evaluation")
                .arg(r.device_count.value_or(1))
                .arg(text(r.device_type))
                .arg(r.price_per_device_hour.value_or(0.0), 0, 'f', 2)
                .arg(r.cost ? QString() : tr(" (set when the run ends)"));
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole) {
        if (column == GlobalBatch || column == FinalAccuracy || column == TimeToTarget || column == Throughput ||
            column == Cost)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    const bool sort = role == SortRole;
    if (role != Qt::DisplayRole && !sort) return {};
    auto num = [&](const auto& v, const QString& shown) -> QVariant {
        if (sort) return v ? QVariant(static_cast<double>(*v)) : QVariant(-1e300);
        return shown;
    };
    switch (column) {
        case Name: return text(r.name);
        case Status: return statusText(r.status);
        case Strategy: return text(r.strategy);
        case Devices: return text(r.devices);
        case GlobalBatch: return num(r.global_batch, format::integer(r.global_batch));
        case FinalAccuracy: return num(r.final_accuracy, format::percent(r.final_accuracy));
        case TimeToTarget: return num(r.time_to_target, format::duration(r.time_to_target));
        case Kind: return text(r.kind);
        case Throughput: {
            if (r.kind == "serve") {
                const auto it = runs_->serve.find(r.id.value);
                if (it == runs_->serve.end()) return sort ? QVariant(-1e300) : QVariant(QString());
                if (sort) return it->second.bestQps;
                QString shown = tr("%1 QPS").arg(it->second.bestQps, 0, 'f', 1);
                if (it->second.p99Ms) shown += tr(" · p99 %1 ms").arg(*it->second.p99Ms, 0, 'f', 2);
                return shown;
            }
            if (r.kind == "predict")
                return num(r.throughput, r.throughput ? tr("%1 examples/s").arg(format::integer(static_cast<int64_t>(std::llround(*r.throughput))))
                                                      : QString());
            return num(r.throughput, format::throughput(r.throughput));
        }
        case Cost: return num(r.cost, r.cost ? QStringLiteral("$%1").arg(*r.cost, 0, 'f', *r.cost < 1 ? 4 : 2) : QString());
        case Verdict: return text(r.verdict);
        case Started: return sort ? QVariant(text(r.started_at)) : QVariant(format::localTime(r.started_at));
    }
    return {};
}

QVariant RunTableModel::groupData(const Group& g, int column, int role) const {
    const RunList& list = *runs_;
    const profiler::RunRow& first = list.runs[g.members.front()];
    const int n = static_cast<int>(g.members.size());
    if (role == RunIdRole) return {};
    if (role == RunIdsRole) {
        QList<qint64> ids;
        for (size_t i : g.members) ids.append(list.runs[i].id.value);
        return QVariant::fromValue(ids);
    }
    if (role == IsGroupRole) return true;
    const Stats acc = statsOf(list, g.members, [](const profiler::RunRow& r) { return r.final_accuracy; });
    const Stats ttt = statsOf(list, g.members, [](const profiler::RunRow& r) { return r.time_to_target; });
    const Stats thr = statsOf(list, g.members, [](const profiler::RunRow& r) { return r.throughput; });
    if (role == Qt::ToolTipRole) {
        if (column == Name) return tr("%1 runs of one experiment that differ only by seed").arg(n);
        if (column == FinalAccuracy && acc.n > 0)
            return tr("mean ± standard deviation over %1 run(s) with an evaluation").arg(acc.n);
        if (column == TimeToTarget) return tr("mean over the %1 of %2 runs that reached the target").arg(ttt.n).arg(n);
        return {};
    }
    if (role == Qt::TextAlignmentRole) return runData(first, column, role);
    const bool sort = role == SortRole;
    if (role != Qt::DisplayRole && !sort) return {};
    auto mean = [&](const Stats& s, const QString& shown) -> QVariant {
        if (sort) return s.n ? QVariant(s.mean) : QVariant(-1e300);
        return s.n ? shown : QString();
    };
    switch (column) {
        case Name: return sort ? QVariant(text(first.name)) : QVariant(tr("%1  (%2 seeds)").arg(text(first.name)).arg(n));
        case Status: {
            std::map<std::string, int> counts;
            for (size_t i : g.members) ++counts[std::string(profiler::runStatusName(list.runs[i].status))];
            if (counts.size() == 1) return text(counts.begin()->first);
            QStringList parts;
            for (const auto& [name, count] : counts) parts << QStringLiteral("%1 %2").arg(count).arg(text(name));
            return parts.join(QStringLiteral(", "));
        }
        case FinalAccuracy:
            return mean(acc, QStringLiteral("%1 ± %2 %").arg(acc.mean * 100, 0, 'f', 1).arg(acc.sd * 100, 0, 'f', 1));
        case TimeToTarget:
            return mean(ttt, format::duration(ttt.mean) + (ttt.n < n ? tr(" (%1/%2)").arg(ttt.n).arg(n) : QString()));
        case Throughput: return mean(thr, format::throughput(thr.mean));
        case Verdict: {
            std::map<std::string, int> counts;
            for (size_t i : g.members)
                if (list.runs[i].verdict) ++counts[*list.runs[i].verdict];
            if (counts.empty()) return QString();
            auto best = std::max_element(counts.begin(), counts.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
            return text(best->first) + (best->second < n ? tr(" (%1/%2)").arg(best->second).arg(n) : QString());
        }
        default: return runData(first, column, role);
    }
}

}  // namespace trainbench::ui
