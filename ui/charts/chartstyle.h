#pragma once
// How every chart looks: the Qt Charts theme picked from the application palette (light or dark),
// the chart blended into the window, and series colours that read on both backgrounds.
#include <QColor>
#include <QPalette>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui::chartstyle {

// Pixels around the cursor searched for a data point when a chart shows the point under it.
inline constexpr double kHoverRadius = 12.0;

// Dark when the palette's window colour is dark (lightness below the middle).
bool isDark(const QPalette& palette);

// Theme, background, label and grid colours from `palette`. Qt Charts resets every series'
// colours on a theme change: re-apply them afterwards.
void apply(QChartView* view, const QPalette& palette);

// The i-th colour of the qualitative palette (cycles), tuned for the background.
QColor seriesColor(int index, bool dark);

// A fixed colour per step-time category ("input", "forward", …) and memory part ("parameters",
// "activations", …), so charts compare at a glance; unknown names get seriesColor(fallbackIndex).
QColor categoryColor(const QString& category, int fallbackIndex, bool dark);

// Round ticks about every `pixelsPerTick` over `pixels` of axis length, labelled with the
// decimals they need; sets the range to [min, max] as given.
void setTicks(QValueAxis* axis, double min, double max, double pixels, double pixelsPerTick);

// The colour of a band under a line of colour `line`: translucent.
QColor bandColor(const QColor& line, bool dark);

}  // namespace trainbench::ui::chartstyle
