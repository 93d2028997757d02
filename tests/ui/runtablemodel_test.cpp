// The Runs page's models: every shape a store can hand them, under QAbstractItemModelTester, and
// the figures a user reads off them.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include "ui/models/runfiltermodel.h"
#include "ui/models/runtablemodel.h"

using namespace trainbench;
using namespace trainbench::ui;

namespace {

profiler::RunRow run(int64_t id, const std::string& name, int seed, double accuracy,
                     profiler::RunStatus status = profiler::RunStatus::Completed, int batch = 64) {
    profiler::RunRow r;
    r.id = profiler::RunId{id};
    r.name = name;
    r.status = status;
    r.strategy = "single";
    r.devices = "cpu:1";
    r.global_batch = batch;
    r.config_json = "{\"name\": \"" + name + "\", \"seed\": " + std::to_string(seed) +
                    ", \"train\": {\"batch_size\": " + std::to_string(batch) + "}}";
    r.final_accuracy = accuracy;
    r.throughput = 1000.0 * static_cast<double>(id);
    r.started_at = "2026-11-2" + std::to_string(id % 10) + "T10:00:00.000Z";
    if (status == profiler::RunStatus::Failed) r.message = "step 12: rank 1 of 2: allReduceSum failed";
    return r;
}

RunListPtr listOf(std::vector<profiler::RunRow> rows, int64_t generation = 1) {
    auto l = std::make_shared<RunList>();
    l->runs = std::move(rows);  // newest first, as the store lists them
    l->generation = generation;
    return l;
}

}  // namespace

class RunTableModelTest : public QObject {
    Q_OBJECT
private slots:
    void flatListShowsEveryRunWithItsFigures() {
        RunTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns(listOf({run(3, "c", 1, 0.871), run(2, "b", 2, 0.5, profiler::RunStatus::Failed),
                              run(1, "a", 1, 0.9)}));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(0, RunTableModel::Name).data().toString(), QString("c"));
        QCOMPARE(model.index(0, RunTableModel::FinalAccuracy).data().toString(), QString("87.1 %"));
        QCOMPARE(model.index(0, RunTableModel::Throughput).data().toString(), QString("3,000 samples/s"));
        QCOMPARE(model.index(0, RunTableModel::FinalAccuracy).data(RunTableModel::SortRole).toDouble(), 0.871);
        QCOMPARE(model.index(1, RunTableModel::Status).data().toString(), QString("failed"));
        QVERIFY(model.index(1, RunTableModel::Status).data(Qt::ToolTipRole).toString().contains("allReduceSum"));
        QCOMPARE(model.index(2, 0).data(RunTableModel::RunIdRole).toLongLong(), 1);
        QCOMPARE(model.index(0, RunTableModel::Cost).data().toString(), QString());  // no price recorded
        QCOMPARE(model.rowCount(model.index(0, 0)), 0);
    }

    void aNewRunIsInsertedAndTheSelectionSurvives() {
        RunTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns(listOf({run(2, "b", 1, 0.8), run(1, "a", 1, 0.9)}));
        QPersistentModelIndex selected = model.index(1, 0);  // run 1
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        model.setRuns(listOf({run(4, "d", 1, 0.7), run(3, "c", 1, 0.6), run(2, "b", 1, 0.8), run(1, "a", 1, 0.9)}, 2));
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserts.count(), 1);
        QVERIFY(selected.isValid());
        QCOMPARE(selected.row(), 3);
        QCOMPARE(selected.data(RunTableModel::RunIdRole).toLongLong(), 1);
        // A deletion is a reset (the user asked for it).
        model.setRuns(listOf({run(4, "d", 1, 0.7), run(1, "a", 1, 0.9)}, 3));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.indexOfRun(1).row(), 1);
    }

    void runsThatDifferOnlyBySeedAreOneGroupWithTheirMean() {
        RunTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns(listOf({run(4, "w-s3", 3, 0.86), run(3, "other", 1, 0.5, profiler::RunStatus::Completed, 128),
                              run(2, "w-s2", 2, 0.88), run(1, "w-s1", 1, 0.90)}));
        model.setGroupBySeed(true);
        QCOMPARE(model.rowCount(), 2);
        const QModelIndex group = model.index(0, 0);
        QVERIFY(group.data(RunTableModel::IsGroupRole).toBool());
        QCOMPARE(model.rowCount(group), 3);
        QVERIFY(group.data().toString().contains("3 seeds"));
        // mean 88.0 %, sample standard deviation 2.0 points
        QCOMPARE(model.index(0, RunTableModel::FinalAccuracy).data().toString(), QString("88.0 ± 2.0 %"));
        QCOMPARE(model.index(0, RunTableModel::FinalAccuracy).data(RunTableModel::SortRole).toDouble(), 0.88);
        const auto ids = group.data(RunTableModel::RunIdsRole).value<QList<qint64>>();
        QCOMPARE(ids, (QList<qint64>{4, 2, 1}));
        QCOMPARE(model.index(1, 0, group).data(RunTableModel::RunIdRole).toLongLong(), 2);
        QCOMPARE(model.runAt(group), nullptr);
        QCOMPARE(model.runAt(model.index(1, 0))->id.value, 3);  // a group of one is a plain row
        QCOMPARE(model.indexOfRun(1).parent(), group);
        model.setGroupBySeed(false);
        QCOMPARE(model.rowCount(), 4);
    }

    void filterMatchesWordsAndStatusAndSortsNumbersAsNumbers() {
        RunTableModel model;
        RunFilterModel filter;
        filter.setSourceModel(&model);
        QAbstractItemModelTester tester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns(listOf({run(3, "cnn-wide", 1, 0.95), run(2, "mlp", 2, 0.5, profiler::RunStatus::Failed),
                              run(1, "cnn", 1, 0.9)}));
        filter.sort(RunTableModel::Throughput, Qt::AscendingOrder);
        QCOMPARE(filter.index(0, RunTableModel::Name).data().toString(), QString("cnn"));
        filter.setText("cnn");
        QCOMPARE(filter.rowCount(), 2);
        filter.setText("cnn wide");
        QCOMPARE(filter.rowCount(), 1);
        filter.setText("");
        filter.setStatus("failed");
        QCOMPARE(filter.rowCount(), 1);
        QCOMPARE(filter.index(0, RunTableModel::Name).data().toString(), QString("mlp"));
        filter.setStatus("");
        // The three configs differ only by name and seed: one group, of which two runs match.
        model.setGroupBySeed(true);
        filter.setText("cnn");
        QCOMPARE(filter.rowCount(), 1);
        QCOMPARE(filter.rowCount(filter.index(0, 0)), 2);
    }
};

QTEST_MAIN(RunTableModelTest)
#include "runtablemodel_test.moc"
