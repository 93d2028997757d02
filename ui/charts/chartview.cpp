#include "ui/charts/chartview.h"

#include "ui/charts/chartexport.h"
#include "ui/charts/chartstyle.h"
#include "ui/charts/refreshthrottle.h"

#include <QContextMenuEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeyEvent>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>
#include <QToolTip>
#include <QWheelEvent>
#include <QtCharts/QValueAxis>

#include <QGraphicsLayout>

#include <algorithm>
#include <cmath>

namespace trainbench::ui {

ChartView::ChartView(QWidget* parent) : QChartView(new QChart, parent) {
    setRenderHint(QPainter::Antialiasing);
    setMouseTracking(true);
    setFrameShape(QFrame::NoFrame);
    chart()->setMargins(QMargins(4, 4, 4, 4));
    chart()->layout()->setContentsMargins(0, 0, 0, 0);
    chart()->legend()->setAlignment(Qt::AlignBottom);
    setMinimumSize(240, 160);
    throttle_ = new RefreshThrottle([this] { redraw(); }, 30, this);
}

bool ChartView::savePng(const QString& path, QString* error) { return chartexport::savePng(this, path, error); }

bool ChartView::saveCsv(const QString& path, QString* error) const {
    return chartexport::saveText(path, csv(), error);
}

void ChartView::refreshNow() { throttle_->flush(); }

void ChartView::requestRedraw() { throttle_->request(); }

void ChartView::setXRange(double min, double max) {
    if (!zoomAxis_ || !(min < max)) return;
    if (zoomAxis_->min() == min && zoomAxis_->max() == max) {
        onZoomAxisChanged(min, max);  // the axis does not signal an unchanged range
        return;
    }
    // One range change: the chart redraws its lines once for it. New ticks come with the
    // re-bucketed redraw, unless the old interval would put hundreds of ticks on the new range.
    const double plotWidth = chart()->plotArea().width() > 1 ? chart()->plotArea().width() : width() * 0.85;
    if (zoomAxis_->tickType() == QValueAxis::TicksDynamic && zoomAxis_->tickInterval() > 0 &&
        (max - min) / zoomAxis_->tickInterval() > 4 * plotWidth / kXTickPixels + 4)
        chartstyle::setTicks(zoomAxis_, min, max, plotWidth, kXTickPixels);
    else
        zoomAxis_->setRange(min, max);
}

void ChartView::resetZoom() {
    if (!zoomed_) return;
    zoomed_ = false;
    requestRedraw();
    const auto [lo, hi] = dataXRange();
    emit xRangeChanged(lo, hi);
}

QPair<double, double> ChartView::xRange() const { return zoomed_ ? qMakePair(viewMin_, viewMax_) : dataXRange(); }

void ChartView::enableXZoom(QValueAxis* axis) {
    zoomAxis_ = axis;
    connect(axis, &QValueAxis::rangeChanged, this, &ChartView::onZoomAxisChanged);
    setRubberBand(QChartView::HorizontalRubberBand);
    setFocusPolicy(Qt::StrongFocus);
}

void ChartView::onZoomAxisChanged(double min, double max) {
    if (settingAxes_) return;
    zoomed_ = true;
    viewMin_ = min;
    viewMax_ = max;
    requestRedraw();
    emit xRangeChanged(min, max);
}

void ChartView::setAxesQuietly(const std::function<void()>& set) {
    const bool was = settingAxes_;
    settingAxes_ = true;
    set();
    settingAxes_ = was;
}

void ChartView::applyPalette() {
    dark_ = chartstyle::isDark(palette());
    chartstyle::apply(this, palette());
    restyle();
}

QPointF ChartView::toChart(const QPointF& pos) const {
    return chart()->mapFromScene(mapToScene(pos.toPoint()));
}

void ChartView::changeEvent(QEvent* event) {
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyPalette();
}

void ChartView::resizeEvent(QResizeEvent* event) {
    QChartView::resizeEvent(event);
    requestRedraw();  // bucket counts and labels follow the plot's size
}

void ChartView::mouseMoveEvent(QMouseEvent* event) {
    QChartView::mouseMoveEvent(event);
    if (event->buttons() != Qt::NoButton) return;  // dragging a rubber band
    const QString text = tooltipAt(event->position());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void ChartView::wheelEvent(QWheelEvent* event) {
    if (!zoomAxis_ || event->angleDelta().y() == 0) {
        QChartView::wheelEvent(event);
        return;
    }
    const QRectF plot = chart()->plotArea();
    const QPointF at = toChart(event->position());
    const double lo = zoomAxis_->min(), hi = zoomAxis_->max();
    // Zoom about the value under the cursor, so it stays put: 1.25× per wheel notch.
    const double fraction = plot.width() > 0 ? std::clamp((at.x() - plot.left()) / plot.width(), 0.0, 1.0) : 0.5;
    const double anchor = lo + fraction * (hi - lo);
    const double factor = std::pow(1.25, -event->angleDelta().y() / 120.0);
    const double span = (hi - lo) * factor;
    if (span <= 0 || !std::isfinite(span)) return;
    setXRange(anchor - fraction * span, anchor + (1.0 - fraction) * span);
    event->accept();
}

void ChartView::mouseDoubleClickEvent(QMouseEvent* event) {
    if (zoomAxis_ && event->button() == Qt::LeftButton) {
        resetZoom();
        event->accept();
        return;
    }
    QChartView::mouseDoubleClickEvent(event);
}

void ChartView::keyPressEvent(QKeyEvent* event) {
    if (zoomAxis_ && event->key() == Qt::Key_Escape) {
        resetZoom();
        event->accept();
        return;
    }
    QChartView::keyPressEvent(event);
}

void ChartView::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    const QString name = chart() && !chart()->title().isEmpty() ? chart()->title() : tr("chart");
    auto ask = [this, &name](const QString& ext, const QString& filter) {
        QSettings settings;
        const QString folder = settings.value(QStringLiteral("export/folder"),
                                              QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
        QString base = name.toLower();
        base.replace(QLatin1Char(' '), QLatin1Char('-'));
        const QString path = QFileDialog::getSaveFileName(this, tr("Save %1").arg(name),
                                                          folder + QLatin1Char('/') + base + ext, filter);
        if (!path.isEmpty()) settings.setValue(QStringLiteral("export/folder"), QFileInfo(path).absolutePath());
        return path;
    };
    menu.addAction(tr("Save image as PNG…"), this, [this, ask] {
        const QString path = ask(QStringLiteral(".png"), tr("PNG image (*.png)"));
        QString error;
        if (!path.isEmpty() && !savePng(path, &error)) QMessageBox::warning(this, tr("Save image"), error);
    });
    menu.addAction(tr("Save data as CSV…"), this, [this, ask] {
        const QString path = ask(QStringLiteral(".csv"), tr("CSV (*.csv)"));
        QString error;
        if (!path.isEmpty() && !saveCsv(path, &error)) QMessageBox::warning(this, tr("Save data"), error);
    });
    if (zoomAxis_) {
        menu.addSeparator();
        QAction* reset = menu.addAction(tr("Reset zoom"), this, &ChartView::resetZoom);
        reset->setShortcut(QKeySequence(Qt::Key_Escape));
        reset->setEnabled(zoomed_);
    }
    menu.exec(event->globalPos());
}

void ChartView::leaveEvent(QEvent* event) {
    QToolTip::hideText();
    QChartView::leaveEvent(event);
}

}  // namespace trainbench::ui
