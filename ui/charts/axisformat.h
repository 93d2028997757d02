#pragma once
// Numbers on chart axes and in tooltips: label formats that show enough decimals for the range,
// and the unit (s/ms/µs, min/h; B/KiB/MiB/GiB) that keeps a range's numbers short.
#include <QString>

namespace trainbench::ui::axisformat {

// A round tick step (1, 2 or 5 × 10^k) near `rough`.
double niceStep(double rough);
// A QValueAxis label format ("%.0f", "%.2f") with the decimals ticks `step` apart need.
QString labelFormat(double step);

// A value as a person reads it in a tooltip: integers whole, others with 6 significant digits.
QString value(double v);

// A unit for values up to `maxValue` of a base unit: multiply by `scale`, append `suffix`.
struct Unit {
    double scale = 1.0;
    QString suffix;
};
Unit secondsUnit(double maxSeconds);  // µs, ms, s, min, h
Unit bytesUnit(double maxBytes);      // B, KiB, MiB, GiB, TiB

QString seconds(double s);  // "12.3 ms", "1.50 s", "2.5 min"
QString bytes(double b);    // "512 MiB", "15.8 GiB"

}  // namespace trainbench::ui::axisformat
