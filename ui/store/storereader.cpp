#include "ui/store/storereader.h"

#include <map>

#include "app/loadtest/servingrunverdict.h"

#include <QFileInfo>
#include <QTimer>

#include <exception>

namespace trainbench::ui {

namespace {

bool anyRunning(const RunList* list) {
    if (!list) return false;
    for (const auto& r : list->runs)
        if (r.status == profiler::RunStatus::Running) return true;
    return false;
}

}  // namespace

StoreReader::StoreReader(QObject* parent) : QObject(parent) {}

StoreReader::~StoreReader() = default;

void StoreReader::open(const QString& path) {
    if (!timer_) {
        // Created here, on the reader's thread, so that it ticks there.
        timer_ = new QTimer(this);
        timer_->setInterval(kPollMilliseconds);
        connect(timer_, &QTimer::timeout, this, [this] { readRuns(false); });
    }
    path_ = path;
    followed_.clear();
    attach();
}

void StoreReader::attach() {
    timer_->stop();
    store_.reset();
    last_.reset();
    dataVersion_ = -1;
    for (auto& [id, f] : followed_) f = Followed{};
    info_ = StoreInfo{};
    info_.path = path_;
    info_.binarySchemaVersion = profiler::RunStore::latestSchemaVersion();
    if (!QFileInfo::exists(path_)) {
        // Not created yet: an empty list now, the store once the first run creates the file.
        info_.exists = false;
        emit opened(info_);
        auto list = std::make_shared<RunList>();
        list->store = info_;
        list->generation = ++generation_;
        last_ = list;
        emit runsChanged(last_);
        timer_->start();
        return;
    }
    try {
        store_.emplace(profiler::RunStore::open(path_.toStdString(), profiler::OpenMode::ReadOnly));
    } catch (const std::exception& e) {
        emit failed(QString::fromStdString(e.what()));
        return;
    }
    info_.path = QString::fromStdString(store_->path());
    info_.schemaVersion = store_->schemaVersion();
    info_.needsMigration = store_->needsMigration();
    if (store_->schemaVersion() > info_.binarySchemaVersion) {
        info_.readOnly = true;
        info_.readOnlyReason = QString::fromStdString(store_->readOnlyReason());
    } else if (!QFileInfo(path_).isWritable()) {
        info_.readOnly = true;
        info_.readOnlyReason = tr("%1: the file is not writable; shown read-only").arg(info_.path);
    }
    emit opened(info_);
    readRuns(true);
    timer_->start();
}

void StoreReader::follow(const QList<qint64>& ids, const QList<qint64>& resend) {
    std::map<int64_t, Followed> next;
    for (qint64 id : ids) {
        auto it = followed_.find(id);
        next[id] = it != followed_.end() && !resend.contains(id) ? std::move(it->second) : Followed{};
    }
    followed_ = std::move(next);
    if (store_ && last_) updateFollowed(last_->runs, false);
}

void StoreReader::poll() { readRuns(true); }

void StoreReader::stop() {
    if (timer_) timer_->stop();
    store_.reset();
}

void StoreReader::readRuns(bool force) {
    if (!store_) {
        if (!info_.exists && timer_ && QFileInfo::exists(path_)) attach();
        return;
    }
    try {
        const int64_t version = store_->dataVersion();
        // Another process created the schema or migrated it: read it anew, with its new columns.
        if (version != dataVersion_ && store_->schemaChanged()) {
            attach();
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        // A run process that dies commits nothing: only its missing pid tells, so while runs are
        // running the list is read again now and then even when the file did not change.
        const bool livenessDue = anyRunning(last_.get()) &&
                                 now - lastLiveness_ >= std::chrono::milliseconds(kLivenessMilliseconds);
        if (!force && version == dataVersion_ && !livenessDue) return;
        dataVersion_ = version;
        if (livenessDue || force) lastLiveness_ = now;
        std::vector<profiler::RunRow> rows = store_->listRuns();
        std::map<int64_t, ServeSummary> serve = serveSummaries(rows);
        if (!last_ || rows != last_->runs || serve != last_->serve) {
            auto list = std::make_shared<RunList>();
            list->store = info_;
            list->runs = std::move(rows);
            list->serve = std::move(serve);
            list->generation = ++generation_;
            last_ = list;
            emit runsChanged(last_);
        }
        updateFollowed(last_->runs, force);
    } catch (const std::exception& e) {
        emit failed(QString::fromStdString(e.what()));
    }
}

std::map<int64_t, ServeSummary> StoreReader::serveSummaries(const std::vector<profiler::RunRow>& rows) {
    std::map<int64_t, ServeSummary> out;
    for (const auto& r : rows) {
        if (r.kind != "serve") continue;
        ServeSummary s;
        for (const auto& p : store_->loadTestPoints(r.id)) {
            ++s.points;
            if (s.points == 1 || p.achieved_qps > s.bestQps) {
                s.bestQps = p.achieved_qps;
                s.p99Ms = p.p99_ms;
            }
        }
        if (s.points > 0) out[r.id.value] = s;
    }
    return out;
}

void StoreReader::updateFollowed(const std::vector<profiler::RunRow>& rows, bool force) {
    for (auto& [id, f] : followed_) {
        const profiler::RunRow* row = nullptr;
        for (const auto& r : rows)
            if (r.id.value == id) row = &r;
        if (!row) continue;  // deleted, or not yet listed
        if (!force && f.sent && f.row && *f.row == *row && row->status != profiler::RunStatus::Running) continue;
        if (auto update = updateOf(*row, f)) emit runUpdated(std::make_shared<const RunUpdate>(std::move(*update)));
    }
}

std::optional<RunUpdate> StoreReader::updateOf(const profiler::RunRow& row, Followed& f) {
    const bool rowChanged = !f.row || !(*f.row == row);
    RunUpdate u;
    u.row = row;
    u.reset = !f.sent;
    if (u.reset) f.lastStep = 0;
    u.newSteps = store_->steps(row.id, f.lastStep);
    u.evals = store_->evals(row.id);
    if (row.kind == "serve") u.loadTestPoints = store_->loadTestPoints(row.id);
    const bool pointsChanged = u.loadTestPoints != f.points;
    if (f.sent && !rowChanged && !pointsChanged && u.newSteps.empty() && u.evals.size() == f.evals) return std::nullopt;
    f.points = u.loadTestPoints;
    // The small, slow-changing parts are read again only when the run's row changed (status,
    // summary, verdict); each update carries them whole so that a view just replaces its copy.
    if (!f.sent || rowChanged) {
        f.attributes = store_->attributes(row.id);
        f.opStats = store_->opStats(row.id);
        f.verdict = store_->verdict(row.id);
    }
    if (!f.sent || rowChanged || !u.newSteps.empty()) f.replicaMeans = store_->replicaMeans(row.id);
    u.replicaMeans = f.replicaMeans;
    u.attributes = f.attributes;
    u.opStats = f.opStats;
    u.verdict = f.verdict;
    if (row.kind == "serve" && !u.loadTestPoints.empty()) {
        std::map<std::string, std::string> attributes(f.attributes.begin(), f.attributes.end());
        u.servingVerdict = profiler::classifyServing(u.loadTestPoints, app::servedSettings(row, attributes));
    }
    if (!u.newSteps.empty()) f.lastStep = u.newSteps.back().step;
    f.evals = u.evals.size();
    f.sent = true;
    f.row = row;
    return u;
}

void StoreReader::write(const std::function<void(profiler::RunStore&)>& edit) {
    if (!QFileInfo::exists(path_)) {
        emit editFailed(tr("%1: no such run store").arg(path_));
        return;
    }
    try {
        // The reading connection never writes. A change opens the store read-write, which first
        // migrates an older schema (asked for before the change was sent) and stores dead runs
        // as interrupted.
        auto writable = profiler::RunStore::open(path_.toStdString(), profiler::OpenMode::ReadWrite);
        edit(writable);
    } catch (const std::exception& e) {
        emit editFailed(QString::fromStdString(e.what()));
    }
    // The change came through another connection, so readRuns sees the file's data version move
    // and, if the change migrated the schema, reopens the store.
    if (!store_) attach();
    else readRuns(true);
}

void StoreReader::renameRun(qint64 id, const QString& name) {
    write([&](profiler::RunStore& store) {
        if (!store.renameRun(profiler::RunId{id}, name.toStdString()))
            emit editFailed(tr("run %1 no longer exists").arg(id));
    });
}

void StoreReader::upgrade() {
    write([](profiler::RunStore&) {});
}

void StoreReader::readTimeToAccuracy(quint64 request, double target) {
    auto snapshot = std::make_shared<TtaSnapshot>();
    snapshot->request = request;
    snapshot->target = target;
    if (!store_) {
        if (info_.exists) snapshot->error = tr("no run store is open");  // else: no runs yet
    } else {
        try {
            const auto goal = profiler::TargetAccuracy::fromFraction(target);
            snapshot->runs = profiler::readTimeToAccuracy(*store_, store_->listRuns(), goal);
            snapshot->groups = profiler::groupBySeed(snapshot->runs);
        } catch (const std::exception& e) {
            snapshot->error = QString::fromStdString(e.what());
        }
    }
    emit timeToAccuracyRead(snapshot);
}

void StoreReader::deleteRuns(const QList<qint64>& ids) {
    write([&](profiler::RunStore& store) {
        for (qint64 id : ids) {
            try {
                store.deleteRun(profiler::RunId{id});
                followed_.erase(id);
            } catch (const std::exception& e) {
                emit editFailed(QString::fromStdString(e.what()));
            }
        }
    });
}

}  // namespace trainbench::ui
