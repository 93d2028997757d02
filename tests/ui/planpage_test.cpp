// The Plan page over a real store that the test fills: the configurations ranked by time (or cost)
// to the target with the deadline, budget and both flags shown, unknown costs shown as unknown,
// the ones that never reached listed last with why, the scatter with its limits and feasible
// corner; a sweep's points without runs projected from a run with the same numerics.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "app/experiment/sweep.h"
#include "tests/profiler/ttatestutil.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/planchart.h"
#include "ui/models/plantablemodel.h"
#include "ui/pages/plan/planpage.h"
#include "ui/store/storeservice.h"

using namespace trainbench;
using namespace trainbench::ui;
using profiler::testutil::configRun;
using profiler::testutil::HandRun;
using profiler::testutil::writeRun;

namespace {

// fast: emulated 100 s, $10. mid: 5 seeds, mean of the middle three 400 s, $4. cheap: 3 h, $1.08.
// free: 150 s, no price. never: best 70 %.
void fillStore(const std::string& db) {
    writeRun(db, configRun("fast", 1, 10, 10.0, 0.9, 360.0, "virtual"));
    const double mid[] = {400, 200, 600, 300, 500};
    for (int seed = 0; seed < 5; ++seed) writeRun(db, configRun("mid", seed, 1, mid[seed], 0.9, 36.0));
    writeRun(db, configRun("cheap", 1, 3, 3600.0, 0.9, 0.36));
    writeRun(db, configRun("free", 1, 1, 150.0, 0.9, std::nullopt));
    writeRun(db, configRun("never", 1, 4, 1.0, 0.7, 1.0));
}

QString cell(const PlanTableModel* m, int row, int column) { return m->index(row, column).data().toString(); }

int rowOf(const PlanTableModel* m, const QString& label) {
    for (int r = 0; r < m->rowCount(); ++r)
        if (cell(m, r, PlanTableModel::Configuration) == label) return r;
    return -1;
}

void waitForPlan(PlanPage& page, int rows) {
    QTRY_VERIFY_WITH_TIMEOUT(!page.busy() && page.tableModel()->rowCount() == rows, 10000);
}

// With TRAINBENCH_UI_SHOTS set, the page as a PNG there (to look at).
void shoot(QWidget& w, const QString& name) {
    const QString dir = qEnvironmentVariable("TRAINBENCH_UI_SHOTS");
    if (dir.isEmpty()) return;
    QCoreApplication::processEvents();
    static_cast<PlanPage&>(w).chart()->refreshNow();
    chartexport::savePng(&w, dir + QLatin1Char('/') + name);
}

}  // namespace

class PlanPageTest : public QObject {
    Q_OBJECT
private slots:
    void ranksAndFlagsTheStoresConfigurations() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("runs.db").toStdString();
        fillStore(db);
        StoreService service;
        service.open(QString::fromStdString(db));
        PlanPage page(service);
        page.resize(1300, 850);
        page.show();
        page.setTarget(0.85);
        page.setDeadline(QStringLiteral("10m"));
        page.setBudget(QStringLiteral("$5"));
        waitForPlan(page, 5);
        const PlanTableModel* m = page.tableModel();
        QStringList order;
        for (int r = 0; r < m->rowCount(); ++r) order << cell(m, r, PlanTableModel::Configuration);
        QCOMPARE(order, (QStringList{"fast", "free", "mid", "cheap", "never"}));

        const int fast = 0, free = 1, mid = 2, cheap = 3, never = 4;
        QCOMPARE(cell(m, fast, PlanTableModel::Source), QStringLiteral("emulated"));
        QCOMPARE(cell(m, fast, PlanTableModel::Time), QStringLiteral("100.0 s"));
        QCOMPARE(cell(m, fast, PlanTableModel::Cost), QStringLiteral("$10.00"));
        QCOMPARE(cell(m, fast, PlanTableModel::Deadline), QStringLiteral("yes"));
        QCOMPARE(cell(m, fast, PlanTableModel::Budget), QStringLiteral("no"));
        QCOMPARE(cell(m, fast, PlanTableModel::Both), QStringLiteral("no"));
        QCOMPARE(cell(m, free, PlanTableModel::Cost), QStringLiteral("unknown"));
        QCOMPARE(cell(m, free, PlanTableModel::Budget), QStringLiteral("unknown"));
        QCOMPARE(cell(m, mid, PlanTableModel::Source), QStringLiteral("measured"));
        QCOMPARE(cell(m, mid, PlanTableModel::Runs), QStringLiteral("5"));
        QCOMPARE(cell(m, mid, PlanTableModel::Time), QStringLiteral("6.7 min"));
        QCOMPARE(cell(m, mid, PlanTableModel::Cost), QStringLiteral("$4.00"));
        QCOMPARE(cell(m, mid, PlanTableModel::Both), QStringLiteral("yes"));
        QVERIFY2(cell(m, mid, PlanTableModel::Notes).contains(QStringLiteral("fastest within budget")),
                 qPrintable(cell(m, mid, PlanTableModel::Notes)));
        QVERIFY(cell(m, mid, PlanTableModel::Notes).contains(QStringLiteral("cheapest within deadline")));
        QCOMPARE(cell(m, cheap, PlanTableModel::Deadline), QStringLiteral("no"));
        QCOMPARE(cell(m, cheap, PlanTableModel::Budget), QStringLiteral("yes"));
        QCOMPARE(cell(m, never, PlanTableModel::Time), QStringLiteral("not reached"));
        QVERIFY2(cell(m, never, PlanTableModel::Notes).contains(QStringLiteral("never reached the target (best 70.00 %")),
                 qPrintable(cell(m, never, PlanTableModel::Notes)));
        QVERIFY(page.summaryText().contains(QStringLiteral("Fastest within budget: mid")));
        QVERIFY(page.summaryText().contains(QStringLiteral("1 of 5 configurations meet both limits")));

        // The scatter: only what has a time and a cost; the limits and the corner they bound.
        PlanChart* chart = page.chart();
        chart->refreshNow();
        QCOMPARE(chart->points().size(), size_t(3));
        QVERIFY(chart->deadlineDrawn());
        QVERIFY(chart->budgetDrawn());
        QCOMPARE(chart->feasibleCorner(), QRectF(0, 0, 600, 5));
        for (const PlanChartPoint& p : chart->points()) QCOMPARE(p.meetsBoth, p.label == QLatin1String("mid"));
        shoot(page, QStringLiteral("plan-limits.png"));

        // By cost: the cheapest first, unknown costs after the known ones.
        page.setOrder(profiler::PlanOrder::Cost);
        QCOMPARE(cell(m, 0, PlanTableModel::Configuration), QStringLiteral("cheap"));
        QCOMPARE(cell(m, 3, PlanTableModel::Configuration), QStringLiteral("free"));

        // A deadline that does not parse says so and is not applied.
        page.setDeadline(QStringLiteral("2x"));
        QVERIFY2(page.problemText().contains(QStringLiteral("deadline '2x': unknown unit 'x'")), qPrintable(page.problemText()));
        QVERIFY(page.problemText().contains(QStringLiteral("no deadline applied")));
        QCOMPARE(cell(m, rowOf(m, "cheap"), PlanTableModel::Deadline), QStringLiteral("–"));
        chart->refreshNow();
        QVERIFY(!chart->deadlineDrawn());

        // Another target reads the runs again: at 95 % nothing is reached.
        page.setTarget(0.95);
        QTRY_VERIFY_WITH_TIMEOUT(!page.busy() && cell(m, 0, PlanTableModel::Time) == QStringLiteral("not reached"), 10000);
        QVERIFY(page.chart()->points().empty());
    }

    void projectsSweepPointsWithoutRuns() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("runs.db").toStdString();
        // A shape-only data set: the estimate opens no files. Infeed pinned, as the run had it.
        const QString sweep = dir.filePath("sweep.json");
        std::ofstream(sweep.toStdString()) << R"({"name": "w1", "model": {"preset": "mlp"},
          "data": {"dataset": "shape", "shape": {"channels": 1, "height": 28, "width": 28, "classes": 10, "train_examples": 60000},
                   "drop_remainder": true},
          "train": {"batch_size": 256, "epochs": 1},
          "device": {"type": "a100-sxm4-40gb", "infeed_seconds_per_batch": 0.001},
          "sweep": {"device.type": ["a100-sxm4-40gb", "v100-sxm2-16gb", "tpu-v3"]}})";
        // The A100 point was run (the test writes what its run would record): 40 steps of 1 ms to 85 %.
        const auto points = app::loadSweepFile(sweep.toStdString());
        HandRun a100;
        a100.name = points[0].name;
        a100.config = points[0].experiment.resolved.dump();
        a100.globalBatch = 256;
        a100.stepSeconds.assign(40, 0.001);
        a100.evals = {{20, 0.80}, {40, 0.86}};
        a100.pricePerDeviceHour = 3.0;
        a100.clock = "virtual";
        writeRun(db, a100);

        StoreService service;
        service.open(QString::fromStdString(db));
        PlanPage page(service);
        page.resize(1300, 850);
        page.show();
        page.setTarget(0.85);
        page.setExperimentFile(sweep);
        waitForPlan(page, 3);
        const PlanTableModel* m = page.tableModel();
        const int measured = rowOf(m, QString::fromStdString(points[0].name));
        QVERIFY(measured >= 0);
        QCOMPARE(cell(m, measured, PlanTableModel::Source), QStringLiteral("emulated"));
        QCOMPARE(cell(m, measured, PlanTableModel::Time), QStringLiteral("40 ms"));
        for (size_t i = 1; i < points.size(); ++i) {
            const int r = rowOf(m, QString::fromStdString(points[i].name));
            QVERIFY(r >= 0);
            QCOMPARE(cell(m, r, PlanTableModel::Source), QStringLiteral("projected"));
            QCOMPARE(cell(m, r, PlanTableModel::Runs), QStringLiteral("(1)"));
            QVERIFY2(cell(m, r, PlanTableModel::Notes).contains(QStringLiteral("40 steps (from run 1)")),
                     qPrintable(cell(m, r, PlanTableModel::Notes)));
            QVERIFY(cell(m, r, PlanTableModel::Cost).startsWith(QLatin1Char('$')));
        }
        QVERIFY(page.problemText().isEmpty());
        shoot(page, QStringLiteral("plan-sweep.png"));

        // A sweep file that does not parse: the store's configurations, and the error.
        const QString bad = dir.filePath("bad.json");
        std::ofstream(bad.toStdString()) << R"({"model": {"preset": "mlp"}, "train": {"batch_size": -1}})";
        page.setExperimentFile(bad);
        QTRY_VERIFY_WITH_TIMEOUT(!page.busy() && page.problemText().contains(QStringLiteral("sweep:")), 10000);
        QVERIFY2(page.problemText().contains(QStringLiteral("train.batch_size")), qPrintable(page.problemText()));
        QCOMPARE(m->rowCount(), 1);
    }
};

QTEST_MAIN(PlanPageTest)
#include "planpage_test.moc"
