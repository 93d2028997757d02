#include "ui/models/format.h"

#include <QLocale>

#include <cmath>

namespace trainbench::ui::format {

namespace {
// The C locale's digits with thousands separators: the same in every user's locale, like the CLI.
QString grouped(int64_t v) {
    QLocale c = QLocale::c();
    c.setNumberOptions(QLocale::DefaultNumberOptions);
    return c.toString(static_cast<qlonglong>(v));
}
}  // namespace

QString percent(std::optional<double> fraction, int decimals) {
    if (!fraction || !std::isfinite(*fraction)) return {};
    return QString::number(*fraction * 100.0, 'f', decimals) + QStringLiteral(" %");
}

QString duration(std::optional<double> seconds) {
    if (!seconds || !std::isfinite(*seconds)) return {};
    const double s = *seconds;
    if (s < 1.0) return QString::number(s * 1000.0, 'f', s < 0.01 ? 2 : 0) + QStringLiteral(" ms");
    if (s < 60.0) return QString::number(s, 'f', 1) + QStringLiteral(" s");
    const auto total = static_cast<int64_t>(std::llround(s));
    if (total < 3600) return QStringLiteral("%1 m %2 s").arg(total / 60).arg(total % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 h %2 m").arg(total / 3600).arg((total % 3600) / 60, 2, 10, QLatin1Char('0'));
}

QString throughput(std::optional<double> samplesPerSecond) {
    if (!samplesPerSecond || !std::isfinite(*samplesPerSecond)) return {};
    const double v = *samplesPerSecond;
    const QString n = v >= 100 ? grouped(std::llround(v)) : QString::number(v, 'f', v >= 10 ? 1 : 2);
    return n + QStringLiteral(" samples/s");
}

QString bytes(std::optional<double> value) {
    if (!value || !std::isfinite(*value)) return {};
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = *value;
    int u = 0;
    while (std::abs(v) >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    return QString::number(v, 'f', u == 0 ? 0 : 1) + QLatin1Char(' ') + QLatin1String(units[u]);
}

QString integer(std::optional<int64_t> value) {
    if (!value) return {};
    return grouped(*value);
}

QString number(std::optional<double> value, int significant) {
    if (!value || !std::isfinite(*value)) return {};
    return QString::number(*value, 'g', significant);
}

QDateTime parseTime(const std::string& iso) {
    QDateTime t = QDateTime::fromString(QString::fromStdString(iso), Qt::ISODateWithMs);
    if (!t.isValid()) t = QDateTime::fromString(QString::fromStdString(iso), Qt::ISODate);
    return t;
}

QString localTime(const std::string& iso) {
    const QDateTime t = parseTime(iso);
    if (!t.isValid()) return QString::fromStdString(iso);
    return t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
}

}  // namespace trainbench::ui::format
