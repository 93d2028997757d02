// The Compare page's tables under QAbstractItemModelTester: the config diff (exactly the differing
// keys, differences-only toggle, layers flattened) and the side-by-side figures.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "ui/models/comparesummarymodel.h"
#include "ui/models/configdiffmodel.h"

using namespace trainbench;
using namespace trainbench::ui;

class CompareModelsTest : public QObject {
    Q_OBJECT
private slots:
    void configDiffListsExactlyTheKeysThatDiffer() {
        ConfigDiffModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setConfigs({"a (1)", "b (2)"},
                         {R"({"name": "a", "train": {"batch_size": 64, "epochs": 2},
                              "model": {"layers": [{"type": "dense", "units": 128}]}})",
                          R"({"name": "b", "train": {"batch_size": 128, "epochs": 2},
                              "model": {"layers": [{"type": "dense", "units": 256}]}, "strategy": {"replicas": 2}})"});
        QCOMPARE(model.keys(), (QStringList{"model.layers[0].units", "name", "strategy.replicas", "train.batch_size"}));
        QCOMPARE(model.columnCount(), 3);
        QCOMPARE(model.headerData(2, Qt::Horizontal).toString(), QStringLiteral("b (2)"));
        const int batch = static_cast<int>(model.keys().indexOf("train.batch_size"));
        QCOMPARE(model.index(batch, 1).data().toString(), QStringLiteral("64"));
        QCOMPARE(model.index(batch, 2).data().toString(), QStringLiteral("128"));
        QVERIFY(model.index(batch, 0).data(ConfigDiffModel::DiffersRole).toBool());
        // A key only one run has is empty for the other, with a tooltip saying so.
        const int replicas = static_cast<int>(model.keys().indexOf("strategy.replicas"));
        QCOMPARE(model.index(replicas, 1).data().toString(), QString());
        QVERIFY(model.index(replicas, 1).data(Qt::ToolTipRole).toString().contains("not set"));
        model.setDifferencesOnly(false);
        QVERIFY(model.keys().contains("train.epochs"));
        QCOMPARE(model.keys().size(), 6);
        QVERIFY(!model.index(static_cast<int>(model.keys().indexOf("train.epochs")), 0).data(ConfigDiffModel::DiffersRole).toBool());
    }

    void summaryShowsTheRecordedFiguresAndTheBreakdownShares() {
        CompareSummaryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        CompareSummaryModel::RunFigures a;
        a.row.id = profiler::RunId{1};
        a.row.name = "fast";
        a.row.status = profiler::RunStatus::Completed;
        a.row.final_accuracy = 0.875;
        a.row.verdict = "input (high)";
        for (int s = 1; s <= 4; ++s) {
            profiler::StepSample r;
            r.step = s;
            r.step_seconds = 0.010;
            r.input_seconds = 0.004;
            r.forward_seconds = 0.003;
            r.backward_seconds = 0.003;
            a.steps.push_back(r);
        }
        CompareSummaryModel::RunFigures b;
        b.row.id = profiler::RunId{2};
        b.row.name = "none";
        b.row.status = profiler::RunStatus::Failed;
        model.setRuns({a, b});
        QCOMPARE(model.columnCount(), 3);
        const QStringList figures = model.figures();
        auto cell = [&](const QString& figure, int column) {
            return model.index(static_cast<int>(figures.indexOf(figure)), column).data().toString();
        };
        QCOMPARE(cell("final accuracy", 1), QStringLiteral("87.5 %"));
        QCOMPARE(cell("verdict", 1), QStringLiteral("input (high)"));
        QCOMPARE(cell("step time", 1), QStringLiteral("10 ms"));
        QCOMPARE(cell("input wait", 1), QStringLiteral("4.00 ms  (40.0 %)"));
        // What the failed run did not record stays empty: nothing is made up.
        QCOMPARE(cell("final accuracy", 2), QString());
        QCOMPARE(cell("step time", 2), QString());
        QCOMPARE(cell("status", 2), QStringLiteral("failed"));
        model.setRuns({});
        QCOMPARE(model.columnCount(), 1);
    }
};

QTEST_MAIN(CompareModelsTest)
#include "comparemodels_test.moc"
