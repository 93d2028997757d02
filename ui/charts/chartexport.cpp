#include "ui/charts/chartexport.h"

#include <QLocale>
#include <QPainter>
#include <QSaveFile>
#include <QWidget>

#include <cmath>
#include <limits>

namespace trainbench::ui::chartexport {
namespace {

bool sameX(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

QImage render(QWidget* widget, qreal devicePixelRatio) {
    QImage image(widget->size() * devicePixelRatio, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(devicePixelRatio);
    image.fill(widget->palette().color(QPalette::Window));
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    widget->render(&painter);
    painter.end();
    return image;
}

bool savePng(QWidget* widget, const QString& path, QString* error) {
    const QImage image = render(widget);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit()) {
        if (error) *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

QString field(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')) &&
        !text.contains(QLatin1Char('\r')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString number(double v) {
    if (std::isnan(v)) return {};
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QString seriesCsv(const QString& xTitle, const std::vector<Series>& series) {
    QString out = field(xTitle);
    size_t total = 0;
    for (const Series& s : series) {
        out += QLatin1Char(',') + field(s.name);
        total += s.size();
    }
    out += QLatin1Char('\n');
    out.reserve(out.size() + qsizetype(total) * 12);
    // k-way merge over the series (each sorted by x): one row per distinct x; a series with the
    // same x twice yields a second row rather than losing a point.
    std::vector<size_t> at(series.size(), 0);
    for (;;) {
        double x = std::numeric_limits<double>::infinity();
        bool any = false;
        for (size_t k = 0; k < series.size() && !std::isnan(x); ++k) {
            if (at[k] < series[k].size()) {
                const double xk = (*series[k].points)[at[k]].x();
                x = std::isnan(xk) ? xk : std::min(x, xk);  // a NaN x gets a row of its own
                any = true;
            }
        }
        if (!any) break;
        out += number(x);
        for (size_t k = 0; k < series.size(); ++k) {
            out += QLatin1Char(',');
            if (at[k] < series[k].size() && sameX((*series[k].points)[at[k]].x(), x))
                out += number((*series[k].points)[at[k]++].y());
        }
        out += QLatin1Char('\n');
    }
    return out;
}

bool saveText(const QString& path, const QString& text, QString* error) {
    QSaveFile file(path);
    const QByteArray bytes = text.toUtf8();
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        if (error) *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

}  // namespace trainbench::ui::chartexport
