// Exports and looks shared by every chart: CSV of full-resolution series, PNG at twice the
// widget's size, and the light/dark palette followed as it changes.
#include "charttestutil.h"
#include "ui/charts/breakdownchart.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/chartstyle.h"
#include "ui/charts/memorybar.h"
#include "ui/charts/timeserieschart.h"

#include <QTemporaryDir>
#include <QtCharts/QLineSeries>

#include <cmath>

using namespace trainbench::ui;
using trainbench::ui::test::settle;
using trainbench::ui::test::showAt;

class ChartExportTest : public QObject {
    Q_OBJECT
private slots:
    void csvMergesSeriesByX() {
        const std::vector<Series> s = {Series::make("train loss", {{1, 2.5}, {2, 2.25}, {3, std::nan("")}, {4, 2.0}}),
                                       Series::make("test, \"held out\"", {{2, 2.75}, {4, 2.5}, {5, 2.4}})};
        QCOMPARE(chartexport::seriesCsv("step", s), QString("step,train loss,\"test, \"\"held out\"\"\"\n"
                                                            "1,2.5,\n2,2.25,2.75\n3,,\n4,2,2.5\n5,,2.4\n"));
        QCOMPARE(chartexport::seriesCsv("step", {}), QString("step\n"));
        QCOMPARE(chartexport::number(0.1), QString("0.1"));
        QCOMPARE(chartexport::number(1e-7), QString("1e-07"));
    }

    void chartCsvIsFullResolutionNotTheView() {
        TimeSeriesChart chart;
        std::vector<QPointF> p;
        for (int i = 0; i < 100'000; ++i) p.emplace_back(i, i * 0.5);
        chart.setSeries(Series::make("throughput", p));
        showAt(chart, {600, 300});
        chart.setXRange(10, 20);
        settle(chart);
        const QStringList rows = chart.csv().split('\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 100'001);
        QCOMPARE(rows[0], "step,throughput");
        QCOMPARE(rows[99'999], "99998,49999");
        QTemporaryDir dir;
        QVERIFY(chart.saveCsv(dir.filePath("t.csv")));
        QFile f(dir.filePath("t.csv"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(f.readAll()), chart.csv());
    }

    void pngIsTwiceTheWidgetsSize() {
        MemoryBar bar;
        MemoryFootprint f;
        f.parts = {{"parameters", 100 << 20}};
        bar.setFootprint(f);
        showAt(bar, {640, 240});
        QTemporaryDir dir;
        QString error;
        QVERIFY2(bar.savePng(dir.filePath("m.png"), &error), qPrintable(error));
        QImage image(dir.filePath("m.png"));
        QCOMPARE(image.size(), QSize(1280, 480));
        // Not blank: the bar's colour is in there.
        const QColor window = bar.palette().color(QPalette::Window);
        int other = 0;
        for (int x = 0; x < image.width(); x += 8) other += QColor(image.pixel(x, image.height() / 3)) != window;
        QVERIFY(other > 10);
        QVERIFY(!bar.savePng("/nonexistent-dir/m.png", &error));
        QVERIFY(error.contains("/nonexistent-dir/m.png"));
    }

    void followsTheApplicationPalette() {
        TimeSeriesChart chart;
        chart.setSeries(Series::make("loss", {{0, 1}, {1, 2}}));
        showAt(chart, {400, 300});
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(0x2b2b2b));
        dark.setColor(QPalette::WindowText, QColor(0xe6e6e6));
        const QColor lightLine = chart.lineSeries("loss")->pen().color();
        chart.setPalette(dark);  // what a system switch to dark mode delivers (QEvent::PaletteChange)
        settle(chart);
        QVERIFY(chart.dark());
        QCOMPARE(chart.chart()->theme(), QChart::ChartThemeDark);
        QCOMPARE(chart.chart()->backgroundBrush().color(), QColor(0x2b2b2b));
        // Series keep a colour of their own, tuned for the dark background.
        QVERIFY(chart.lineSeries("loss")->pen().color() != lightLine);
        QVERIFY(chart.lineSeries("loss")->pen().color().lightness() > lightLine.lightness());
        QPalette light;
        light.setColor(QPalette::Window, QColor(0xf0f0f0));
        light.setColor(QPalette::WindowText, Qt::black);
        chart.setPalette(light);
        settle(chart);
        QCOMPARE(chart.chart()->theme(), QChart::ChartThemeLight);
        QCOMPARE(chart.lineSeries("loss")->pen().color(), lightLine);
    }

    void followsAnApplicationWidePaletteSwitch() {
        const QPalette original = QApplication::palette();
        BreakdownChart chart;
        showAt(chart, {400, 300});
        QPalette dark = original;
        dark.setColor(QPalette::Window, QColor(0x202124));
        dark.setColor(QPalette::WindowText, QColor(0xe8eaed));
        QApplication::setPalette(dark);
        settle(chart);
        QCOMPARE(chart.chart()->theme(), QChart::ChartThemeDark);
        QCOMPARE(chart.chart()->backgroundBrush().color(), QColor(0x202124));
        QApplication::setPalette(original);
        settle(chart);
        QCOMPARE(chart.dark(), chartstyle::isDark(original));
    }
};

QTEST_MAIN(ChartExportTest)
#include "chartexport_test.moc"
