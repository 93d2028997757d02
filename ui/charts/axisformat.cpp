#include "ui/charts/axisformat.h"

#include <algorithm>
#include <cmath>

namespace trainbench::ui::axisformat {
namespace {

QString scaled(double v, const Unit& unit) {
    const double x = v * unit.scale;
    const int decimals = std::abs(x) >= 100 ? 0 : std::abs(x) >= 10 ? 1 : 2;
    return QString::number(x, 'f', decimals) + QLatin1Char(' ') + unit.suffix;
}

}  // namespace

double niceStep(double rough) {
    if (!(rough > 0) || !std::isfinite(rough)) return 1.0;
    const double base = std::pow(10.0, std::floor(std::log10(rough)));
    const double f = rough / base;
    return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * base;
}

QString labelFormat(double step) {
    if (!(step > 0) || !std::isfinite(step)) return QStringLiteral("%g");
    // As many decimals as the step needs to tell neighbouring labels apart (steps are round).
    const int decimals = std::clamp(int(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
    return QStringLiteral("%.%1f").arg(decimals);
}

QString value(double v) {
    if (!std::isfinite(v)) return QStringLiteral("–");
    if (v == std::trunc(v) && std::abs(v) < 1e15) return QString::number(qint64(v));
    return QString::number(v, 'g', 6);
}

Unit secondsUnit(double maxSeconds) {
    const double m = std::abs(maxSeconds);
    if (m >= 7200) return {1.0 / 3600, QStringLiteral("h")};
    if (m >= 120) return {1.0 / 60, QStringLiteral("min")};
    if (m >= 1 || m == 0) return {1.0, QStringLiteral("s")};
    if (m >= 1e-3) return {1e3, QStringLiteral("ms")};
    return {1e6, QStringLiteral("µs")};
}

Unit bytesUnit(double maxBytes) {
    static const char* const kSuffix[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double scale = 1.0;
    int i = 0;
    while (i < 4 && std::abs(maxBytes) * scale >= 1024.0) {
        scale /= 1024.0;
        ++i;
    }
    return {scale, QString::fromLatin1(kSuffix[i])};
}

QString seconds(double s) { return scaled(s, secondsUnit(s)); }
QString bytes(double b) { return scaled(b, bytesUnit(b)); }

}  // namespace trainbench::ui::axisformat
