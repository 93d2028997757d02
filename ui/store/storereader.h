#pragma once
// The GUI's only reader of the run store. It lives on its own thread (StoreService puts it there)
// with its own read-only SQLite connection, polls a few times per second, and sends whole
// snapshots: the run list when anything changed, and for each followed run what is new. Opening
// and following never write to the file: an older schema is read as it is, dead runs are shown
// interrupted without being marked, a missing file is shown empty until a run creates it. It also
// carries out the few edits a user makes (rename, delete, upgrade), each on a read-write
// connection of its own, and the heavier reads a page asks for (every run's time to a target), so
// that no SQLite call ever runs on the GUI thread.
#include <QList>
#include <QObject>

#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include "ui/store/storesnapshot.h"

class QTimer;

namespace trainbench::ui {

class StoreReader : public QObject {
    Q_OBJECT
public:
    explicit StoreReader(QObject* parent = nullptr);
    ~StoreReader() override;

    static constexpr int kPollMilliseconds = 250;
    // Run processes are checked for liveness (to show a crashed run) at most this often.
    static constexpr int kLivenessMilliseconds = 1000;

public slots:
    // Opens the store read-only and sends opened() and a first runsChanged(), or failed().
    void open(const QString& path);
    // The runs whose steps, evaluations and verdict to send; the others get no runUpdated(). The
    // runs in `resend` get a whole update (reset) next, for a view that has just started to follow.
    void follow(const QList<qint64>& ids, const QList<qint64>& resend = {});
    // Reads now instead of at the next tick.
    void poll();
    // Edits, each opening the store read-write: that migrates an older schema first, so call them
    // only once the user agreed to that (StoreUpgradePrompt).
    void renameRun(qint64 id, const QString& name);
    void deleteRuns(const QList<qint64>& ids);
    // Migrates an older schema to this binary's (nothing else); opened() follows.
    void upgrade();
    // Reads every run's time to `target` (a fraction in (0, 1]) and sends timeToAccuracyRead().
    void readTimeToAccuracy(quint64 request, double target);
    void stop();

signals:
    void opened(const trainbench::ui::StoreInfo& info);
    void failed(const QString& message);
    void runsChanged(const trainbench::ui::RunListPtr& runs);
    void runUpdated(const trainbench::ui::RunUpdatePtr& update);
    void editFailed(const QString& message);
    void timeToAccuracyRead(const trainbench::ui::TtaSnapshotPtr& snapshot);

private:
    struct Followed {
        int64_t lastStep = 0;
        size_t evals = 0;
        bool sent = false;
        std::optional<profiler::RunRow> row;  // as last sent
        std::vector<std::pair<std::string, std::string>> attributes;
        std::vector<profiler::OpStatRow> opStats;
        std::optional<profiler::Verdict> verdict;
        std::vector<profiler::LoadTestPoint> points;
        std::vector<profiler::ReplicaMean> replicaMeans;
    };

    // Opens path_ read-only (keeping what is followed, sent again whole), or waits for the file.
    void attach();
    void write(const std::function<void(profiler::RunStore&)>& edit);
    void readRuns(bool force);
    std::map<int64_t, ServeSummary> serveSummaries(const std::vector<profiler::RunRow>& rows);
    void updateFollowed(const std::vector<profiler::RunRow>& rows, bool force);
    std::optional<RunUpdate> updateOf(const profiler::RunRow& row, Followed& f);

    QTimer* timer_ = nullptr;
    QString path_;
    std::optional<profiler::RunStore> store_;
    StoreInfo info_;
    int64_t dataVersion_ = -1;
    int64_t generation_ = 0;
    std::shared_ptr<const RunList> last_;
    std::chrono::steady_clock::time_point lastLiveness_{};
    std::map<int64_t, Followed> followed_;
};

}  // namespace trainbench::ui
