#pragma once
// Exports any chart offers: a PNG of the widget (rendered at twice its size so it stays sharp in
// documents) and CSV of full-resolution series (never the downsampled view).
#include "ui/charts/series.h"

#include <QImage>

#include <vector>

QT_BEGIN_NAMESPACE
class QWidget;
QT_END_NAMESPACE

namespace trainbench::ui::chartexport {

// The widget painted into an image of widget size × devicePixelRatio.
QImage render(QWidget* widget, qreal devicePixelRatio = 2.0);
bool savePng(QWidget* widget, const QString& path, QString* error = nullptr);

// Wide CSV: a header `xTitle,<series names…>`, then one row per distinct x (all series merged in
// x order), a series' cell empty where it has no point at that x or its y is NaN.
QString seriesCsv(const QString& xTitle, const std::vector<Series>& series);

QString field(const QString& text);  // quoted when it holds a comma, quote or line break
QString number(double v);            // shortest text that reads back as the same double; "" for NaN

// Writes through a temporary file and renames, so a failed export never leaves half a file.
bool saveText(const QString& path, const QString& text, QString* error = nullptr);

}  // namespace trainbench::ui::chartexport
