#pragma once
// The GUI thread's handle on the run store: it owns the reader's thread, forwards requests to it
// (queued, never waiting) and re-emits its snapshots on the GUI thread. Widgets talk to this.
#include <QList>
#include <QObject>
#include <QThread>

#include <map>

#include "ui/store/storesnapshot.h"

namespace trainbench::ui {

class StoreReader;

class StoreService : public QObject {
    Q_OBJECT
public:
    explicit StoreService(QObject* parent = nullptr);
    ~StoreService() override;

    void open(const QString& path);
    // The runs `owner` (a page) follows; the reader follows the union over owners. A run new to an
    // owner is sent whole again, since the owner has seen nothing of it yet.
    void follow(QObject* owner, const QList<qint64>& ids);
    void refresh();
    // Changes to the store. Each migrates a store of an older schema first: ask the user before
    // (StoreUpgradePrompt::confirm). Opening and following never write.
    void renameRun(qint64 id, const QString& name);
    void deleteRuns(const QList<qint64>& ids);
    // Migrates a store of an older schema to this binary's; opened() follows with the new info.
    void upgrade();
    // Asks for every run's time to `target` (a fraction in (0, 1]); timeToAccuracyRead() brings it
    // with the number returned here, so that a page can drop answers to older requests.
    quint64 requestTimeToAccuracy(double target);

    // The latest of each, or empty before the first.
    const StoreInfo& info() const { return info_; }
    const RunListPtr& runs() const { return runs_; }

signals:
    void opened(const trainbench::ui::StoreInfo& info);
    void failed(const QString& message);
    void runsChanged(const trainbench::ui::RunListPtr& runs);
    void runUpdated(const trainbench::ui::RunUpdatePtr& update);
    void editFailed(const QString& message);
    void timeToAccuracyRead(const trainbench::ui::TtaSnapshotPtr& snapshot);

private:
    QThread thread_;
    StoreReader* reader_ = nullptr;  // lives on thread_, deleted when it finishes
    StoreInfo info_;
    RunListPtr runs_;
    std::map<QObject*, QList<qint64>> followers_;
    quint64 ttaRequests_ = 0;
};

}  // namespace trainbench::ui
