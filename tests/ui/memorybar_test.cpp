// MemoryBar: the footprint's parts stacked against the device's limit, each bar labelled with
// its total and share of the device, tooltips per part and for the limit.
#include "charttestutil.h"
#include "ui/charts/memorybar.h"

#include <QtCharts/QLineSeries>

using namespace trainbench::ui;
using trainbench::ui::test::showAt;

namespace {

constexpr int64_t MiB = 1 << 20;

MemoryFootprint footprint() {
    MemoryFootprint f;
    f.parts = {{"parameters", 1024 * MiB}, {"gradients", 1024 * MiB}, {"optimizer state", 2048 * MiB}, {"activations", 4096 * MiB}};
    f.peakRssBytes = 9216 * MiB;
    f.limitBytes = 16384 * MiB;
    f.deviceName = "V100 16GB";
    return f;
}

QLineSeries* limitLine(MemoryBar& bar) {
    for (QAbstractSeries* s : bar.chart()->series())
        if (auto* line = qobject_cast<QLineSeries*>(s)) return line;
    return nullptr;
}

}  // namespace

class MemoryBarTest : public QObject {
    Q_OBJECT
private slots:
    void barsAreLabelledAgainstTheLimit() {
        MemoryBar bar;
        bar.setFootprint(footprint());
        showAt(bar, {800, 260});
        QCOMPARE(bar.estimateBytes(), 8192 * MiB);
        QCOMPARE(bar.barLabels(), (QStringList{"8.00 GiB · 50 % of the device", "9.00 GiB · 56 % of the device"}));
        QLineSeries* limit = limitLine(bar);
        QVERIFY(limit && limit->isVisible());
        QCOMPARE(limit->points().front().x(), 16.0);  // GiB on the axis
    }

    void tooltipsNameThePartAndTheLimit() {
        MemoryBar bar;
        bar.setFootprint(footprint());
        showAt(bar, {800, 260});
        QLineSeries* limit = limitLine(bar);
        auto at = [&](double gib, double row) {
            return bar.mapFromScene(bar.chart()->mapToScene(bar.chart()->mapToPosition({gib, row}, limit)));
        };
        // The estimate is the top row (1): parameters 0–1, gradients 1–2, optimizer 2–4, activations 4–8 GiB.
        QString tip = bar.tooltipAt(at(3.0, 1.0));
        QVERIFY2(tip.contains("optimizer state") && tip.contains("2.00 GiB") && tip.contains("25.0 % of the estimate"),
                 qPrintable(tip));
        QVERIFY(bar.tooltipAt(at(6.0, 1.0)).contains("activations"));
        QVERIFY(bar.tooltipAt(at(5.0, 0.0)).contains("peak RSS"));
        QVERIFY(bar.tooltipAt(at(12.0, 1.0)).isEmpty());
        tip = bar.tooltipAt(at(16.0, 0.5));
        QVERIFY2(tip.contains("V100 16GB") && tip.contains("16.0 GiB"), qPrintable(tip));
    }

    void withoutLimitOrPeak() {
        MemoryBar bar;
        MemoryFootprint f = footprint();
        f.peakRssBytes.reset();
        f.limitBytes.reset();
        bar.setFootprint(f);
        showAt(bar, {800, 260});
        QCOMPARE(bar.barLabels(), QStringList{"8.00 GiB"});
        QVERIFY(!limitLine(bar)->isVisible());
    }

    void csvListsPartsTotalPeakAndLimit() {
        MemoryBar bar;
        bar.setFootprint(footprint());
        QCOMPARE(bar.csv(), QString("part,bytes\nparameters,1073741824\ngradients,1073741824\noptimizer state,2147483648\n"
                                    "activations,4294967296\nestimate total,8589934592\npeak RSS (measured),9663676416\n"
                                    "device limit (V100 16GB),17179869184\n"));
    }
};

QTEST_MAIN(MemoryBarTest)
#include "memorybar_test.moc"
