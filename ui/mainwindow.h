#pragma once
// The trainbench window: a sidebar of pages (Experiment, Dashboard, Runs, Compare, Plan, Inference) over one run
// store, menus with shortcuts, the store's path and schema in the status bar. Runs are launched as
// processes and followed through the store; closing asks what to do with runs still running.
#include <QMainWindow>
#include <QThread>

#include "ui/jobs/jobtracker.h"
#include "ui/launch/runlauncher.h"
#include "ui/store/storesnapshot.h"

class QLabel;
class QListWidget;
class QStackedWidget;

namespace trainbench::ui {

class ComparePage;
class DashboardPage;
class ExperimentPage;
class PlanPage;
class InferencePage;
class RunsPage;
class StoreService;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum class Page { Experiment, Dashboard, Runs, Compare, Plan, Inference };

    explicit MainWindow(const QString& storePath, QWidget* parent = nullptr);
    ~MainWindow() override;

    void showPage(Page page);
    Page currentPage() const;
    void openStore(const QString& path);
    // Launches the experiment file as a run in this store; its dashboard opens when it starts. A
    // store of an older schema is upgraded first if the user agrees (StoreUpgradePrompt), else
    // nothing is launched.
    void launch(const QString& experimentFile);
    // The banner above the pages (hidden unless the store's schema is older or newer).
    QLabel* storeBanner() const { return storeBanner_; }

    StoreService& store() { return *store_; }
    RunLauncher& launcher() { return *launcher_; }
    ExperimentPage* experimentPage() const { return experiment_; }
    DashboardPage* dashboardPage() const { return dashboard_; }
    RunsPage* runsPage() const { return runs_; }
    ComparePage* comparePage() const { return compare_; }
    PlanPage* planPage() const { return plan_; }
    InferencePage* inferencePage() const { return inference_; }

    // What closing does with runs this window started that still run (tests skip the question).
    enum class OnClose { Ask, StopRuns, LeaveRunning };
    void setOnClose(OnClose what) { onClose_ = what; }

    // Light, dark, or the system's palette ("system" follows it when it changes).
    enum class Theme { System, Light, Dark };
    void setTheme(Theme theme);

    // Writes an HTML (or, pdf, PDF) report of the runs to path, off the GUI thread; reportWritten()
    // or a message box when done. Reports do not supersede each other; closing waits for one being
    // written.
    void startReport(const QList<qint64>& ids, const QString& path, bool pdf);

signals:
    void storeOpened(const trainbench::ui::StoreInfo& info);
    void reportWritten(const QString& path);

protected:
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void buildMenus();
    void onStoreOpened(const StoreInfo& info);
    void showStoreBanner(const StoreInfo& info);
    void onRunsChanged(const RunListPtr& runs);
    void onLaunchFinished(const LaunchedRun& run, const QString& logTail);
    void exportReport(const QList<qint64>& ids);
    void reportFinished(const QString& path, const QString& error);
    void chooseStore();
    void saveSettings() const;
    void restoreSettings();

    StoreService* store_ = nullptr;
    QString storePath_;
    RunLauncher* launcher_ = nullptr;
    QListWidget* nav_ = nullptr;
    QStackedWidget* stack_ = nullptr;
    ExperimentPage* experiment_ = nullptr;
    DashboardPage* dashboard_ = nullptr;
    RunsPage* runs_ = nullptr;
    ComparePage* compare_ = nullptr;
    PlanPage* plan_ = nullptr;
    InferencePage* inference_ = nullptr;
    QLabel* storeLabel_ = nullptr;
    QLabel* storeBanner_ = nullptr;  // an older or newer schema: what the window does with the store
    QList<qint64> awaitingRun_;  // pids of launched processes whose run has not appeared yet
    std::map<qint64, qint64> runOfPid_;  // launched pid -> the newest run it recorded
    OnClose onClose_ = OnClose::Ask;
    Theme theme_ = Theme::System;
    QPalette systemPalette_;
    QString systemStyle_;  // the platform's widget style, back when the theme returns to System
    JobTracker reports_{QThread::idealThreadCount()};  // report writers, each with its own store connection
};

}  // namespace trainbench::ui
