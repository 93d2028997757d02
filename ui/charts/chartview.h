#pragma once
// What every trainbench chart shares: the application palette (light/dark, followed live),
// PNG and CSV export, a tooltip on whatever is under the mouse, redraws throttled to 30 Hz, and —
// for charts over steps or time — zoom on x (rubber band, wheel; double-click or Escape resets).
#include <QtCharts/QChartView>

#include <functional>

QT_BEGIN_NAMESPACE
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

class RefreshThrottle;

class ChartView : public QChartView {
    Q_OBJECT
public:
    static constexpr double kXTickPixels = 110;  // about one x label per this many pixels

    explicit ChartView(QWidget* parent = nullptr);

    // PNG of the chart as shown, at twice the widget's size.
    bool savePng(const QString& path, QString* error = nullptr);
    // The chart's data at full resolution, as CSV with a header row.
    virtual QString csv() const = 0;
    bool saveCsv(const QString& path, QString* error = nullptr) const;

    // The tooltip for the element at `pos` (widget coordinates); empty where there is none.
    virtual QString tooltipAt(const QPointF& pos) const = 0;

    // Applies pending data and zoom changes now instead of at the next throttled redraw.
    void refreshNow();

    // Zoom on x, for charts that enabled it.
    void setXRange(double min, double max);
    void resetZoom();  // all the data again
    bool isZoomed() const { return zoomed_; }
    QPair<double, double> xRange() const;  // what is shown (after the pending redraw)

    bool dark() const { return dark_; }

signals:
    // The visible x range changed by zoom (user or setXRange), e.g. to keep charts in step.
    void xRangeChanged(double min, double max);

protected:
    // Redraws from the current data (called by the throttle; never directly).
    virtual void redraw() = 0;
    // Asks for a redraw at most 30 times a second.
    void requestRedraw();
    // Rubber band on x, wheel zoom around the cursor, double-click and Escape to reset.
    void enableXZoom(QValueAxis* axis);
    // The x range of all the data (what resetZoom() shows).
    virtual QPair<double, double> dataXRange() const { return {0.0, 1.0}; }
    // Sets axis ranges without them counting as a zoom by the user.
    void setAxesQuietly(const std::function<void()>& set);
    // Applies the theme from the palette, then restyle() so series get their colours back.
    void applyPalette();
    virtual void restyle() {}
    // Where `pos` (widget coordinates) lies in chart item coordinates, as plotArea() is given.
    QPointF toChart(const QPointF& pos) const;

    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;
    // Save image as PNG, save data as CSV (full resolution), reset zoom.
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    void onZoomAxisChanged(double min, double max);

    RefreshThrottle* throttle_ = nullptr;
    QValueAxis* zoomAxis_ = nullptr;
    bool zoomed_ = false;
    bool settingAxes_ = false;
    double viewMin_ = 0.0, viewMax_ = 1.0;
    bool dark_ = false;
};

}  // namespace trainbench::ui
