#include "ui/charts/chartstyle.h"

#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QValueAxis>

#include "ui/charts/axisformat.h"

#include <cmath>

#include <array>

namespace trainbench::ui::chartstyle {
namespace {

// Tableau 10 order; the dark set is lifted so lines keep their contrast on a dark plot.
constexpr std::array<QRgb, 8> kLight = {0x1f77b4, 0xd62728, 0x2ca02c, 0x9467bd,
                                        0xff7f0e, 0x17becf, 0x8c564b, 0xe377c2};
constexpr std::array<QRgb, 8> kDark = {0x5aa9e6, 0xff6b6b, 0x6fd46f, 0xb89be6,
                                       0xffa64d, 0x4fd6e3, 0xc9a08e, 0xf7a8dc};

struct Category {
    const char* name;
    QRgb light;
    QRgb dark;
};
// Input wait in orange (the colour users look for first), compute in blues and green,
// communication in red, the rest in greys and muted tones.
// Memory parts follow the same idea: weights in blues, optimizer state green, activations orange.
constexpr std::array<Category, 19> kCategories = {{
    {"input", 0xe69f00, 0xf0b429},
    {"forward", 0x0072b2, 0x4fa3e0},
    {"backward", 0x56b4e9, 0x8fd0f5},
    {"optimizer", 0x009e73, 0x3fc79c},
    {"communication", 0xd55e00, 0xff7f3f},
    {"other", 0x999999, 0x8a8a8a},
    {"output", 0x882255, 0xc76b98},
    {"evaluation", 0xcc79a7, 0xe09cc4},
    {"checkpoint", 0x8c564b, 0xb5857a},
    {"parameters", 0x0072b2, 0x4fa3e0},
    {"gradients", 0x56b4e9, 0x8fd0f5},
    {"optimizer state", 0x009e73, 0x3fc79c},
    {"activations", 0xe69f00, 0xf0b429},
    {"peak RSS", 0x8e8e8e, 0xa8a8a8},
    // A model-parallel step's parts (the layout planner's): compute as above, waiting in yellow,
    // each kind of communication in its own warm tone.
    {"recompute", 0x56b4e9, 0x8fd0f5},
    {"bubble", 0xf0e442, 0xd8cc3c},
    {"tensor communication", 0xd55e00, 0xff7f3f},
    {"pipeline communication", 0xcc79a7, 0xe09cc4},
    {"data communication", 0x882255, 0xc76b98},
}};

}  // namespace

bool isDark(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

void apply(QChartView* view, const QPalette& palette) {
    QChart* chart = view->chart();
    const bool dark = isDark(palette);
    chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    // Blend into the window rather than the theme's own card and gradient.
    const QColor window = palette.color(QPalette::Window);
    const QColor text = palette.color(QPalette::WindowText);
    chart->setBackgroundBrush(window);
    chart->setBackgroundPen(Qt::NoPen);
    chart->setBackgroundRoundness(0);
    chart->setPlotAreaBackgroundVisible(false);
    chart->setTitleBrush(text);
    chart->legend()->setLabelColor(text);
    view->setBackgroundBrush(window);
    QColor grid = text;
    grid.setAlpha(dark ? 45 : 35);
    QColor line = text;
    line.setAlpha(110);
    for (QAbstractAxis* axis : chart->axes()) {
        axis->setLabelsColor(text);
        axis->setTitleBrush(text);
        axis->setGridLineColor(grid);
        axis->setMinorGridLineColor(grid);
        axis->setLinePenColor(line);
    }
}

QColor seriesColor(int index, bool dark) {
    const auto& set = dark ? kDark : kLight;
    return QColor(set[size_t(index) % set.size()]);
}

QColor categoryColor(const QString& category, int fallbackIndex, bool dark) {
    for (const Category& c : kCategories)
        if (category.compare(QLatin1String(c.name), Qt::CaseInsensitive) == 0) return QColor(dark ? c.dark : c.light);
    return seriesColor(fallbackIndex, dark);
}

void setTicks(QValueAxis* axis, double min, double max, double pixels, double pixelsPerTick) {
    const double count = std::max(2.0, pixels / pixelsPerTick);
    const double step = axisformat::niceStep((max - min) / count);
    // Qt Charts lays out every tick between the anchor's multiples at once: a range set under a
    // much smaller old interval (or the reverse) would briefly make thousands. Change whichever
    // of the two shrinks the tick count first.
    const bool dynamic = axis->tickType() == QValueAxis::TicksDynamic;
    if (!dynamic || step >= axis->tickInterval()) axis->setTickInterval(step);
    axis->setTickAnchor(std::floor(min / step) * step);
    axis->setRange(min, max);
    axis->setTickInterval(step);
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setLabelFormat(axisformat::labelFormat(step));
}

QColor bandColor(const QColor& line, bool dark) {
    QColor c = line;
    c.setAlpha(dark ? 70 : 55);
    return c;
}

}  // namespace trainbench::ui::chartstyle
