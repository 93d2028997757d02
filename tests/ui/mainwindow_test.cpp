// The whole window end to end, on the offscreen platform: a short real run launched from the GUI
// ends shown as finished with its charts populated; a run whose process is killed is shown
// failed (interrupted) while the window keeps responding; a store with a newer schema opens
// read-only; closing can stop the runs it started.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QStyle>
#include <QFile>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <signal.h>
#include <sqlite3.h>

#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "tests/ui/windowtestutil.h"
#include "ui/charts/breakdownchart.h"
#include "ui/charts/rankbars.h"
#include "ui/charts/timeserieschart.h"
#include "ui/mainwindow.h"
#include "ui/models/runtablemodel.h"
#include "ui/pages/dashboard/dashboardpage.h"
#include "ui/pages/dashboard/verdictcard.h"
#include "ui/pages/runspage.h"
#include "ui/store/storeservice.h"

using namespace trainbench;
using namespace trainbench::ui;

using testutil::runNamed;
using testutil::writeExperiment;

class MainWindowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);  // settings and logs away from the user's
        QSettings().clear();
    }

    void aShortRunLaunchedFromTheGuiEndsFinishedWithItsCharts() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.db"));
        MainWindow w(db);
        w.setOnClose(MainWindow::OnClose::StopRuns);
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(!w.store().info().path.isEmpty(), 10000);
        QAbstractItemModelTester tester(&w.runsPage()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        w.launch(writeExperiment(dir, QStringLiteral("gui-short"), 40, 20));
        // The dashboard takes the run as soon as its process records it.
        QTRY_VERIFY_WITH_TIMEOUT(w.dashboardPage()->runId() > 0, 30000);
        QCOMPARE(w.currentPage(), MainWindow::Page::Dashboard);
        DashboardPage& d = *w.dashboardPage();
        QTRY_VERIFY_WITH_TIMEOUT(d.history().row().status == profiler::RunStatus::Completed, 60000);
        QTRY_COMPARE_WITH_TIMEOUT(d.history().steps().size(), size_t(40), 10000);
        QCOMPARE(d.history().evals().size(), size_t(2));
        // Charts hold the run's data: every step's loss, both evaluations, the breakdown.
        const auto loss = d.lossChart()->series();
        QVERIFY(!loss.empty());
        QCOMPARE(loss.front().size(), size_t(40));
        // Drawn (redraws are throttled to 30 Hz: at the latest one frame later).
        QTRY_VERIFY_WITH_TIMEOUT(d.lossChart()->lineSeries(loss.front().name)->count() > 0, 2000);
        QCOMPARE(d.accuracyChart()->series().front().size(), size_t(2));
        // The breakdown is rebuilt with the update that ends the run (throttled before it).
        QTRY_VERIFY_WITH_TIMEOUT(!d.breakdownChart()->windows().empty(), 5000);
        QVERIFY(d.breakdownChart()->shownCategories().contains(QStringLiteral("forward")));
        QCOMPARE(d.history().progress().total, 40);
        // Zooming one chart zooms the others to the same steps (and they do not echo it back for ever).
        d.lossChart()->setXRange(5.0, 20.0);
        d.lossChart()->refreshNow();
        QTRY_COMPARE_WITH_TIMEOUT(d.throughputChart()->xRange().first, 5.0, 2000);
        QTRY_COMPARE_WITH_TIMEOUT(d.throughputChart()->xRange().second, 20.0, 2000);
        QTRY_VERIFY_WITH_TIMEOUT(d.breakdownChart()->isZoomed(), 2000);
        d.lossChart()->resetZoom();
        QTRY_VERIFY_WITH_TIMEOUT(!d.throughputChart()->isZoomed() && !d.breakdownChart()->isZoomed(), 2000);
        QVERIFY(!d.stopButton()->isEnabled());
        QVERIFY(d.rankBars()->isHidden());  // one device: no ranks to compare
        // The verdict arrives with the finished run.
        QTRY_VERIFY_WITH_TIMEOUT(d.history().verdict().has_value(), 10000);
        QVERIFY(d.verdictCard()->findChild<QLabel*>() != nullptr);
        // The Runs page lists it as completed.
        const QModelIndex row = w.runsPage()->model().indexOfRun(d.runId());
        QVERIFY(row.isValid());
        QCOMPARE(row.siblingAtColumn(RunTableModel::Status).data().toString(), QStringLiteral("completed"));
        // Its report, written off the GUI thread: the same HTML as `trainbench-cli report`.
        QSignalSpy written(&w, &MainWindow::reportWritten);
        const QString report = dir.filePath(QStringLiteral("report.html"));
        w.startReport({d.runId()}, report, false);
        QVERIFY(written.wait(30000));
        QFile html(report);
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QByteArray text = html.readAll();
        QVERIFY(text.contains("gui-short"));
        QVERIFY(text.contains("<svg"));
    }

    // A pipeline's stages side by side: each stage's mean compute, sending and idle time per step, as
    // the store holds them.
    void aPipelineRunShowsEachStagesStep() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.db"));
        MainWindow w(db);
        w.setOnClose(MainWindow::OnClose::StopRuns);
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(!w.store().info().path.isEmpty(), 10000);
        w.launch(writeExperiment(dir, QStringLiteral("gui-pipeline"), 30, 0,
                                 QStringLiteral("\"type\": \"pipeline\", \"stages\": 2, \"micro_batches\": 4")));
        QTRY_VERIFY_WITH_TIMEOUT(w.dashboardPage()->runId() > 0, 30000);
        DashboardPage& d = *w.dashboardPage();
        QTRY_VERIFY_WITH_TIMEOUT(d.history().row().status == profiler::RunStatus::Completed, 60000);
        QTRY_COMPARE_WITH_TIMEOUT(d.rankBars()->ranks().size(), size_t(2), 10000);
        QVERIFY(!d.rankBars()->isHidden());
        QCOMPARE(d.rankBars()->chart()->title(), QStringLiteral("Per stage (last 500 steps)"));
        auto store = profiler::RunStore::open(db.toStdString(), profiler::OpenMode::ReadOnly);
        const auto means = store.replicaMeans(profiler::RunId{d.runId()});
        QCOMPARE(means.size(), size_t(2));
        for (size_t k = 0; k < 2; ++k) {
            const RankParts& shown = d.rankBars()->ranks()[k];
            QCOMPARE(shown.label, QStringLiteral("stage %1").arg(k));
            QCOMPARE(means[k].steps, int64_t(30));
            QVERIFY(shown.computeSeconds > 0.0);
            QCOMPARE(shown.computeSeconds, means[k].compute_seconds);
            QCOMPARE(shown.sendSeconds, means[k].comm_seconds);
            QCOMPARE(shown.idleSeconds, means[k].wait_seconds);
        }
        QCOMPARE(d.rankBars()->barLabels().size(), 2);
    }

    void aKilledRunIsShownFailedWhileTheWindowKeepsResponding() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.db"));
        MainWindow w(db);
        w.setOnClose(MainWindow::OnClose::StopRuns);
        w.show();
        w.launch(writeExperiment(dir, QStringLiteral("gui-doomed"), 100000, 0));
        QTRY_VERIFY_WITH_TIMEOUT(w.dashboardPage()->runId() > 0 && w.dashboardPage()->history().steps().size() >= 5,
                                 30000);
        const qint64 pid = w.dashboardPage()->history().row().pid;
        QVERIFY(w.dashboardPage()->stopButton()->isEnabled());
        QCOMPARE(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
        // The event loop stays free: a 20 ms timer keeps firing while the store reader notices.
        QElapsedTimer clock;
        clock.start();
        qint64 last = 0, worstGap = 0;
        QTimer tick;
        connect(&tick, &QTimer::timeout, [&] {
            worstGap = std::max(worstGap, clock.elapsed() - last);
            last = clock.elapsed();
        });
        tick.start(20);
        QTRY_VERIFY_WITH_TIMEOUT(w.dashboardPage()->history().row().status == profiler::RunStatus::Interrupted, 20000);
        tick.stop();
        QVERIFY2(worstGap < 1000, qPrintable(QStringLiteral("the GUI stalled for %1 ms").arg(worstGap)));
        QVERIFY(w.dashboardPage()->statusLabel()->text().contains(QStringLiteral("killed or crashed")));
        QVERIFY(!w.dashboardPage()->stopButton()->isEnabled());
        QVERIFY(w.isVisible());
        const QModelIndex row = w.runsPage()->model().indexOfRun(w.dashboardPage()->runId());
        QCOMPARE(row.siblingAtColumn(RunTableModel::Status).data().toString(), QStringLiteral("interrupted"));
        QVERIFY(row.siblingAtColumn(RunTableModel::Status).data(Qt::ToolTipRole).toString().contains("killed"));
    }

    void closingCanStopTheRunsItStarted() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.db"));
        auto w = std::make_unique<MainWindow>(db);
        w->setOnClose(MainWindow::OnClose::StopRuns);
        w->show();
        w->launch(writeExperiment(dir, QStringLiteral("gui-stopped"), 100000, 0));
        QTRY_VERIFY_WITH_TIMEOUT(runNamed(*w, "gui-stopped") && w->dashboardPage()->history().steps().size() >= 3, 30000);
        QVERIFY(w->close());
        w.reset();
        // The run finishes its step and records 'stopped'.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                auto store = profiler::RunStore::open(db.toStdString(), profiler::OpenMode::ReadOnly);
                const auto r = store.findRun("gui-stopped");
                return r && r->status == profiler::RunStatus::Stopped;
            }(),
            20000);
    }

    void aStoreWithANewerSchemaOpensReadOnly() {
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("runs.db")).toStdString();
        {
            profiler::RunWriter writer(db, profiler::RunSpec{});
            writer.finish(profiler::RunStatus::Completed, engine::RunSummary{});
        }
        sqlite3* raw = nullptr;
        QCOMPARE(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
        QCOMPARE(sqlite3_exec(raw, "PRAGMA user_version = 999", nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(raw);
        MainWindow w(QString::fromStdString(db));
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.store().info().readOnly, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(w.store().runs() && w.store().runs()->runs.size() == 1, 10000);
        w.runsPage()->selectRuns({1});
        QVERIFY(!w.runsPage()->deleteAction()->isEnabled());
        QVERIFY(!w.runsPage()->renameAction()->isEnabled());
        QVERIFY(w.statusBar()->findChild<QLabel*>() != nullptr);
        bool shown = false;
        for (QLabel* l : w.statusBar()->findChildren<QLabel*>()) shown = shown || l->text().contains("read-only");
        QVERIFY(shown);
    }

    void darkAndLightThemesAndBackToTheSystems() {
        QTemporaryDir dir;
        MainWindow w(dir.filePath(QStringLiteral("runs.db")));
        w.setOnClose(MainWindow::OnClose::LeaveRunning);
        const QPalette system = QApplication::palette();
        const QString style = QApplication::style()->name();
        w.setTheme(MainWindow::Theme::Dark);
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 80);
        w.setTheme(MainWindow::Theme::Light);
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 180);
        w.setTheme(MainWindow::Theme::System);
        QCOMPARE(QApplication::palette().color(QPalette::Window), system.color(QPalette::Window));
        QCOMPARE(QApplication::style()->name(), style);
        QSettings().remove(QStringLiteral("view/theme"));
    }

    void theWindowRemembersItsLayoutAndPage() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.db"));
        {
            MainWindow w(db);
            w.setOnClose(MainWindow::OnClose::LeaveRunning);
            w.show();
            w.resize(1111, 777);
            w.showPage(MainWindow::Page::Compare);
            QVERIFY(w.close());
        }
        MainWindow again(db);
        again.show();
        QCOMPARE(again.currentPage(), MainWindow::Page::Compare);
        QCOMPARE(again.size(), QSize(1111, 777));
    }
};

QTEST_MAIN(MainWindowTest)
#include "mainwindow_test.moc"
