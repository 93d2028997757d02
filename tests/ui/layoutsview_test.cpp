// The Plan page's Layouts tab: GPT-3 175B on 1,024 A100 80 GB searched off the GUI thread and shown
// as the planner ranks it — the table in rank order with the figures as the CLI prints them, the
// mesh Narayanan et al. ran (d8 p16 t8) among the three best meshes, each bar the whole step of its
// layout by part, every rejected layout with why; a model that fits nowhere and bad input said so.
#include <QFile>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include <set>
#include <tuple>

#include "app/plan/layoutplan.h"
#include "ui/charts/stackedbars.h"
#include "ui/models/layouttablemodel.h"
#include "ui/pages/plan/layoutsview.h"
#include "ui/pages/plan/planpage.h"
#include "ui/store/storeservice.h"

using namespace trainbench;
using namespace trainbench::ui;

namespace {

const QString kGpt3 = QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments/models/gpt3-175b.json");

QString cell(const LayoutTableModel* m, int row, int column) { return m->index(row, column).data().toString(); }

void planAndWait(LayoutsView& view) {
    view.plan();
    QTRY_VERIFY_WITH_TIMEOUT(!view.busy(), 30000);
}

}  // namespace

class LayoutsViewTest : public QObject {
    Q_OBJECT
private slots:
    void gpt3On1024A100sIsRankedAsThePlannerRanksIt() {
        LayoutsView view;
        view.resize(1400, 900);
        view.show();
        QVERIFY(view.devices().contains("a100-sxm4-80gb"));
        QVERIFY2(!view.devices().contains("cpu-host"), "only GPUs with NVLink figures");
        view.setModelFile(kGpt3);
        view.setDevice("a100-sxm4-80gb");
        view.setDeviceCount(1024);
        view.setGlobalBatch(0);  // the file's 1536
        planAndWait(view);
        QVERIFY2(view.problemText().isEmpty(), qPrintable(view.problemText()));
        const LayoutPlanResult& r = view.result();
        QVERIFY(r.plan);
        const auto& ranked = r.plan->ranked;
        QVERIFY(ranked.size() >= 3);
        QCOMPARE(r.plan->global_batch, int64_t{1536});

        // The table: the best layouts in rank order, formatted as plan-layouts prints them.
        const LayoutTableModel* m = view.tableModel();
        QCOMPARE(m->rowCount(), std::min<int>(LayoutsView::kTableRows, static_cast<int>(ranked.size())));
        for (int row = 0; row < m->rowCount(); ++row) {
            const auto& e = ranked[static_cast<size_t>(row)];
            QCOMPARE(cell(m, row, LayoutTableModel::Layout), QString::fromStdString(e.layout));
            QCOMPARE(cell(m, row, LayoutTableModel::Step), QString::fromStdString(app::layoutSeconds(e.step_seconds)));
            QCOMPARE(cell(m, row, LayoutTableModel::Memory), QString::fromStdString(app::layoutGib(e.memory_bytes)));
            QVERIFY2(e.memory_bytes <= e.capacity_bytes, "every layout shown fits");
            if (row > 0)
                QVERIFY(m->index(row, LayoutTableModel::Step).data(LayoutTableModel::SortRole).toDouble() >=
                        m->index(row - 1, LayoutTableModel::Step).data(LayoutTableModel::SortRole).toDouble());
        }
        // Narayanan et al. (SC'21) trained GPT-3 on 1,024 A100s as d8 p16 t8: among the best three meshes.
        std::set<std::tuple<int, int, int>> meshes;
        bool reported = false;
        for (const auto& e : ranked) {
            meshes.insert({e.data, e.pipeline, e.tensor});
            if (meshes.size() > 3) break;
            reported = reported || (e.data == 8 && e.pipeline == 16 && e.tensor == 8);
        }
        QVERIFY(reported);

        // The bars: the best layouts, each the whole of its step split into its parts.
        const StackedBars* bars = view.stepBars();
        QCOMPARE(static_cast<int>(bars->rows().size()), std::min<int>(LayoutsView::kBars, static_cast<int>(ranked.size())));
        for (size_t i = 0; i < bars->rows().size(); ++i) {
            const StackedRow& row = bars->rows()[i];
            QVERIFY(row.label.endsWith(QString::fromStdString(ranked[i].layout)));
            QVERIFY(std::abs(row.total() - ranked[i].step_seconds) <= 1e-9 * ranked[i].step_seconds);
            QCOMPARE(row.seconds[0], ranked[i].compute_seconds);
            QCOMPARE(row.seconds[2], ranked[i].bubble_seconds);
        }
        QVERIFY(bars->csv().startsWith("layout,compute_seconds,recompute_seconds,bubble_seconds,tensor_comm_seconds,"));
        QCOMPARE(bars->barLabels().size(), static_cast<qsizetype>(bars->rows().size()));

        // The rejected: memory first, nearest to fitting first, each saying why.
        QTreeWidget* rejected = view.rejectedList();
        QCOMPARE(rejected->topLevelItemCount(), static_cast<int>(r.plan->rejected.size()));
        QVERIFY(rejected->topLevelItemCount() > 0);
        QVERIFY2(rejected->topLevelItem(0)->text(1).startsWith("memory ") &&
                     rejected->topLevelItem(0)->text(1).contains("> 80.0 GiB per device"),
                 qPrintable(rejected->topLevelItem(0)->text(1)));

        const QString summary = view.summaryText();
        QVERIFY2(summary.contains("174.6 B parameters") && summary.contains("batch 1536 on 1024 × a100-sxm4-80gb") &&
                     summary.contains(QStringLiteral("of %1 layouts estimated").arg(r.plan->candidates)) &&
                     summary.contains(QString::fromStdString(ranked.front().layout)),
                 qPrintable(summary));
        if (const QByteArray dir = qgetenv("TRAINBENCH_UI_SHOTS"); !dir.isEmpty())
            view.grab().save(QString::fromUtf8(dir) + "/layouts.png");
    }

    void byCostTheCheapestStepComesFirst() {
        LayoutsView view;
        view.setModelFile(kGpt3);
        view.setDevice("a100-sxm4-80gb");
        view.setDeviceCount(1024);
        view.setByCost(true);
        view.setExhaustive(true);
        planAndWait(view);
        const auto& ranked = view.result().plan->ranked;
        QVERIFY(!ranked.empty());
        QCOMPARE(view.result().plan->evaluated, view.result().plan->candidates);
        for (size_t i = 1; i < ranked.size(); ++i) QVERIFY(ranked[i].usd_per_step >= ranked[i - 1].usd_per_step);
        QVERIFY(view.summaryText().contains("Exhaustive search"));
    }

    void aModelThatFitsNowhereSaysWhatItWouldTake() {
        LayoutsView view;
        view.setModelFile(kGpt3);
        view.setDevice("a100-sxm4-80gb");
        view.setDeviceCount(8);
        view.setGlobalBatch(8);
        planAndWait(view);
        const QString problem = view.problemText();
        QVERIFY2(problem.startsWith(QStringLiteral("No layout of 8 × a100-sxm4-80gb fits memory.")), qPrintable(problem));
        QVERIFY2(problem.contains("recomputation one replica fits on") && problem.contains("GiB per GPU"), qPrintable(problem));
        QCOMPARE(view.tableModel()->rowCount(), 0);
        QVERIFY(view.stepBars()->rows().empty());
        QVERIFY(view.rejectedList()->topLevelItemCount() > 0);
    }

    void badInputIsNamed() {
        QTemporaryDir tmp;
        LayoutsView view;
        view.setModelFile(tmp.filePath("missing.json"));
        planAndWait(view);
        QVERIFY2(view.problemText().contains("missing.json") && view.problemText().contains("cannot be read"),
                 qPrintable(view.problemText()));
        QVERIFY(!view.result().plan);

        QFile bad(tmp.filePath("bad.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"name": "x", "layers": "many", "hidden": 1024, "heads": 16, "sequence": 512, "vocab": 1000})");
        bad.close();
        view.setModelFile(bad.fileName());
        planAndWait(view);
        QVERIFY2(view.problemText().contains("bad.json") && view.problemText().contains("layers"),
                 qPrintable(view.problemText()));
        QCOMPARE(view.tableModel()->rowCount(), 0);

        view.setModelFile(QString());
        planAndWait(view);
        QVERIFY(view.problemText().startsWith("Choose a model"));
    }

    void thePlanPageHasTheLayoutsTab() {
        StoreService store;
        PlanPage page(store);
        QVERIFY(page.layoutsView());
        page.showLayouts(true);
        QVERIFY(page.layoutsView()->isVisibleTo(&page));
        page.showLayouts(false);
        QVERIFY(!page.layoutsView()->isVisibleTo(&page));
    }
};

QTEST_MAIN(LayoutsViewTest)
#include "layoutsview_test.moc"
