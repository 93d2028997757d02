// Inference in the window, over real stores: the Inference page draws one latency–throughput
// curve per server configuration of the store's load tests and sets precisions side by side; a
// load test still running adds the point it measures after the page opened, on the page and on
// its dashboard; a prediction run made by trainbench-cli predict has a dashboard without loss or
// accuracy charts and without a "Try it" that would start training; the Runs page says each run's
// kind and filters by it.
#include <QDoubleSpinBox>
#include <QLineSeries>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include "profiler/store/runattributes.h"
#include "profiler/store/runwriter.h"
#include "ui/charts/breakdownchart.h"
#include "ui/charts/latencybars.h"
#include "ui/charts/timeserieschart.h"
#include "ui/mainwindow.h"
#include "ui/models/runfiltermodel.h"
#include "ui/models/runtablemodel.h"
#include "ui/pages/dashboard/dashboardpage.h"
#include "ui/pages/dashboard/verdictcard.h"
#include "ui/pages/inference/inferencepage.h"
#include "ui/pages/inference/serveview.h"
#include "ui/pages/runspage.h"
#include "ui/store/storeservice.h"

using namespace trainbench;
using namespace trainbench::ui;
namespace runattr = trainbench::profiler::runattr;

namespace {

struct ServerConfig {
    std::string precision;
    int maxBatch;
    int timeoutMicros;
    int instances;
};

// One point of a Server-scenario load test: latency grows as the load nears what the server can do.
profiler::LoadTestPoint point(int64_t index, double qps, double p50, double p99) {
    profiler::LoadTestPoint p;
    p.point = index;
    p.scenario = "server";
    p.target_qps = qps;
    p.queries = static_cast<int64_t>(qps * 3);
    p.achieved_qps = qps * 0.995;
    p.p50_ms = p50;
    p.p90_ms = (p50 + p99) / 2;
    p.p95_ms = (p50 + 2 * p99) / 3;
    p.p99_ms = p99;
    p.p999_ms = p99 * 1.3;
    p.queue_ms = p50 * 0.3;
    p.batch_ms = p50 * 0.1;
    p.compute_ms = p50 * 0.45;
    p.serialize_ms = p50 * 0.1;
    p.network_ms = p50 * 0.05;
    for (int64_t s = 0; s < 3; ++s)
        p.seconds.push_back({s, static_cast<int64_t>(qps), 0, p50 * (0.95 + 0.05 * static_cast<double>(s)), p99});
    return p;
}

std::unique_ptr<profiler::RunWriter> serveRun(const std::string& db, const std::string& name, const ServerConfig& c) {
    profiler::RunSpec spec;
    spec.name = name;
    spec.kind = "serve";
    spec.config_json = "{\"target_qps\": [200, 400, 800]}";
    spec.strategy = "single";
    spec.devices = "cpu:1";
    spec.host_price_per_hour = 0.10;
    auto w = std::make_unique<profiler::RunWriter>(db, spec);
    w->attributes({{runattr::kServeModel, "run 1 (fmnist-mlp)"},
                   {runattr::kServeSourceRun, "1"},
                   {runattr::kServePrecision, c.precision},
                   {runattr::kServeEnableBatching, "1"},
                   {runattr::kServeMaxBatchSize, std::to_string(c.maxBatch)},
                   {runattr::kServeBatchTimeoutMicros, std::to_string(c.timeoutMicros)},
                   {runattr::kServeInstances, std::to_string(c.instances)},
                   {runattr::kLoadtestScenario, "server"},
                   {runattr::kLoadtestInstancesPerQuery, "1"}});
    // The model as measured: int8 about 3.9x smaller and 0.2 points less accurate.
    const bool int8 = c.precision == "int8";
    w->attributes({{runattr::kServeWeightBytes, int8 ? "272000" : "1066000"},
                   {runattr::kServeFp32WeightBytes, "1066000"},
                   {runattr::kServeTestAccuracy, int8 ? "0.8812" : "0.8831"},
                   {runattr::kServeFp32TestAccuracy, "0.8831"},
                   {runattr::kServeTestExamples, "10000"}});
    if (int8) w->attributes({{runattr::kServeCalibration, "4 batches x 64 training examples, minmax, seed 0, u8 levels 255"}});
    return w;
}

void finishServe(profiler::RunWriter& w) { w.finish(profiler::RunStatus::Completed, engine::RunSummary{}); }

// Points Qt Charts draws of the chart's series `name` (-1: no such series yet).
int drawn(TimeSeriesChart* chart, const QString& name) {
    const QLineSeries* line = chart->lineSeries(name);
    return line ? static_cast<int>(line->count()) : -1;
}

int runCli(const QStringList& args, const QString& dir) {
#ifdef TRAINBENCH_CLI_PATH
    QProcess cli;
    cli.setWorkingDirectory(dir);
    cli.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    cli.start(QStringLiteral(TRAINBENCH_CLI_PATH), args);
    if (!cli.waitForFinished(300000)) return -1;
    return cli.exitCode();
#else
    Q_UNUSED(args);
    Q_UNUSED(dir);
    return -1;
#endif
}

}  // namespace

class InferencePageTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void onePerConfigurationCurveAndPrecisionsSideBySide() {
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("runs.db")).toStdString();
        const ServerConfig configs[] = {{"fp32", 1, 0, 1}, {"fp32", 32, 2000, 1}, {"int8", 32, 2000, 1}};
        // The second configuration measured twice: two runs, one curve.
        int n = 0;
        for (const ServerConfig& c : {configs[0], configs[1], configs[2], configs[1]}) {
            auto w = serveRun(db, "lt-" + std::to_string(n++), c);
            const double speed = (c.maxBatch > 1 ? 3.0 : 1.0) * (c.precision == "int8" ? 1.8 : 1.0);
            w->loadTestPoint(point(0, 200 * speed, 1.1 / speed, 2.0 / speed));
            w->loadTestPoint(point(1, 400 * speed, 1.4 / speed, 3.5 / speed));
            w->loadTestPoint(point(2, 800 * speed, 2.5 / speed, 9.0 / speed));
            finishServe(*w);
        }
        MainWindow w(QString::fromStdString(db));
        w.show();
        w.showPage(MainWindow::Page::Inference);
        InferencePage* page = w.inferencePage();
        QTRY_COMPARE_WITH_TIMEOUT(page->runsReceived(), 4, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(page->configurations().size()), 3, 10000);
        QCOMPARE(page->curveChart()->seriesNames().size(), 3);
        for (const QString& name : page->curveChart()->seriesNames())
            // Drawn at the chart's next refresh.
            QTRY_COMPARE_WITH_TIMEOUT(drawn(page->curveChart(), name),
                                      name == QStringLiteral("fp32 · b32 · 2000 µs · ×1") ? 6 : 3, 5000);
        QVERIFY(page->curveChart()->seriesNames().contains(QStringLiteral("int8 · b32 · 2000 µs · ×1")));
        QCOMPARE(page->table()->item(2, 1)->text(), QStringLiteral("int8 · batch ≤ 32 · timeout 2000 µs · 1 instance"));
        // Precisions side by side: the fp32 rows, then int8; the best point's figures and its cost.
        QTableWidget* t = page->table();
        QCOMPARE(t->rowCount(), 3);
        QCOMPARE(t->item(0, 0)->text(), QStringLiteral("fp32"));
        QCOMPARE(t->item(2, 0)->text(), QStringLiteral("int8"));
        // Size and accuracy as the load tests measured the model, fp32 beside int8.
        QCOMPARE(t->item(0, 2)->text(), QStringLiteral("1.066"));
        QCOMPARE(t->item(2, 2)->text(), QStringLiteral("0.272"));
        QCOMPARE(t->item(2, 2)->toolTip(), QStringLiteral("0.272 MB, 3.92x smaller than fp32's 1.066 MB"));
        QCOMPARE(t->item(0, 3)->text(), QStringLiteral("88.31"));
        QCOMPARE(t->item(2, 3)->text(), QStringLiteral("88.12"));
        QCOMPARE(t->item(2, 3)->toolTip(), QStringLiteral("88.12 % on 10000 test examples as served; fp32: 88.31 % (-0.19 points); "
                                                          "calibrated on 4 batches x 64 training examples, minmax, seed 0, u8 levels 255"));
        QCOMPARE(t->item(2, 5)->text(), QStringLiteral("%1").arg(800 * 5.4 * 0.995, 0, 'f', 1));
        QCOMPARE(t->item(2, 7)->text(), QStringLiteral("%1").arg(9.0 / 5.4, 0, 'f', 2));
        // $0.10 an hour over 800 × 5.4 × 0.995 predictions a second.
        QCOMPARE(t->item(2, 8)->text(), QStringLiteral("$%1").arg(0.10 / 3600 / (800 * 5.4 * 0.995) * 1e6, 0, 'f', 4));

        // The selected configuration's verdict is the serving verdict of its points: 40 % of a query's
        // time waiting (queue 30 %, batch 10 %), so queue-bound.
        t->selectRow(0);
        QTRY_COMPARE_WITH_TIMEOUT(page->verdictCard()->titleText(), QStringLiteral("queue-bound (moderate)"), 5000);

        // A p99 bound of 1 ms: the int8 configuration's best point is its second (p99 3.5 / 5.4 ms).
        page->boundBox()->setValue(1.0);
        QTRY_COMPARE_WITH_TIMEOUT(t->item(2, 5)->text(), QStringLiteral("%1").arg(400 * 5.4 * 0.995, 0, 'f', 1), 5000);

        // Runs: the kind column and filter, a load test's best QPS and p99.
        const RunTableModel& model = w.runsPage()->model();
        int serveRows = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            QCOMPARE(model.index(r, RunTableModel::Kind).data().toString(), QStringLiteral("serve"));
            QVERIFY(model.index(r, RunTableModel::Throughput).data().toString().contains(QStringLiteral("QPS · p99")));
            ++serveRows;
        }
        QCOMPARE(serveRows, 4);
        w.runsPage()->findChild<RunFilterModel*>()->setKind(QStringLiteral("train"));
        QCOMPARE(w.runsPage()->findChild<RunFilterModel*>()->rowCount(), 0);
    }

    void aRunningLoadTestAddsItsNewPointOnThePageAndItsDashboard() {
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("runs.db")).toStdString();
        auto writer = serveRun(db, "live", {"fp32", 16, 1000, 2});
        writer->loadTestPoint(point(0, 300, 1.2, 2.5));
        writer->flush();
        MainWindow w(QString::fromStdString(db));
        w.show();
        w.showPage(MainWindow::Page::Inference);
        InferencePage* page = w.inferencePage();
        QTRY_COMPARE_WITH_TIMEOUT(page->runsReceived(), 1, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(page->configurations().size()), 1, 10000);
        const QString label = QStringLiteral("fp32 · b16 · 1000 µs · ×2");
        QTRY_COMPARE_WITH_TIMEOUT(drawn(page->curveChart(), label), 1, 10000);
        DashboardPage* dash = w.dashboardPage();
        dash->showRun(writer->runId().value);
        QTRY_VERIFY_WITH_TIMEOUT(dash->showsServeView(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(drawn(dash->serveView()->curveChart(), QStringLiteral("p99")), 1, 10000);
        // Three seconds, the last partial: two rates.
        QTRY_COMPARE_WITH_TIMEOUT(drawn(dash->serveView()->qpsChart(), QStringLiteral("QPS")), 2, 5000);
        QCOMPARE(dash->serveView()->breakdownBars()->parts().size(), size_t{5});

        // The load test measures its next point while both are open.
        writer->loadTestPoint(point(1, 600, 2.0, 6.0));
        writer->flush();
        QTRY_COMPARE_WITH_TIMEOUT(drawn(page->curveChart(), label), 2, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(drawn(dash->serveView()->curveChart(), QStringLiteral("p99")), 2, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(drawn(dash->serveView()->qpsChart(), QStringLiteral("QPS")), 4, 5000);
        finishServe(*writer);
    }

    void aPredictionRunsDashboardHasNoTrainingCharts() {
#ifndef TRAINBENCH_CLI_PATH
        QSKIP("trainbench-cli is not built");
#else
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.db"));
        const QString source = QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments/fmnist-mlp.json");
        QCOMPARE(runCli({"run", source, "--db", db, "-q", "--set", "train.max_steps=20", "--set",
                         "train.checkpoint_at_end=true", "--set", "train.eval_every_steps=0", "--set", "name=source"},
                        dir.path()),
                 0);
        QCOMPARE(runCli({"predict", "source", "-o", dir.filePath(QStringLiteral("p.csv")), "--db", db, "-q"}, dir.path()), 0);
        MainWindow w(db);
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.store().runs() && w.store().runs()->runs.size() == 2, 10000);
        const profiler::RunRow predict = w.store().runs()->runs.front();
        QCOMPARE(predict.kind, std::string("predict"));
        DashboardPage* dash = w.dashboardPage();
        dash->showRun(predict.id.value);
        w.showPage(MainWindow::Page::Dashboard);
        QTRY_VERIFY_WITH_TIMEOUT(!dash->history().steps().empty() && dash->history().row().status != profiler::RunStatus::Running,
                                 10000);
        QTRY_VERIFY_WITH_TIMEOUT(dash->lossChart()->isHidden(), 5000);
        QVERIFY(dash->accuracyChart()->isHidden());
        QVERIFY(dash->memoryBar()->isHidden());
        QVERIFY(dash->throughputChart()->isVisible());
        QVERIFY(dash->breakdownChart()->isVisible());
        QVERIFY(!dash->showsServeView());
        QTRY_VERIFY_WITH_TIMEOUT(drawn(dash->throughputChart(), QStringLiteral("samples/s")) > 0, 5000);
        // Actions are shown as the `apply` command that runs a new prediction; no button starts training.
        QVERIFY(dash->verdictCard()->tryButtons().isEmpty());
        const RunTableModel& model = w.runsPage()->model();
        const QModelIndex row = model.indexOfRun(predict.id.value);
        QCOMPARE(row.siblingAtColumn(RunTableModel::Kind).data().toString(), QStringLiteral("predict"));
        QVERIFY(row.siblingAtColumn(RunTableModel::Throughput).data().toString().endsWith(QStringLiteral("examples/s")));
#endif
    }
};

QTEST_MAIN(InferencePageTest)
#include "inferencepage_test.moc"
