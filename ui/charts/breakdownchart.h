#pragma once
// Step time over the run as stacked areas, one band per category (input wait at the bottom,
// then forward, backward, optimizer, communication, other, evaluation, checkpoint): each band
// the category's mean seconds per step over a window of steps. Zoom on x re-windows the visible
// steps; the tooltip names the band under the mouse with its seconds and share of the step.
#include "ui/charts/axisformat.h"
#include "ui/charts/breakdowndata.h"
#include "ui/charts/chartview.h"

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

class BreakdownChart : public ChartView {
    Q_OBJECT
public:
    explicit BreakdownChart(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    // The run's breakdown so far; a live run hands a new snapshot, redraws are throttled.
    // Categories that are zero throughout are left out.
    void setData(BreakdownDataPtr snapshot);

    QString csv() const override;
    QString tooltipAt(const QPointF& pos) const override;

    // What is drawn (tests): the windows and the categories stacked, bottom-up.
    const std::vector<BreakdownWindow>& windows() const { return windows_; }
    QStringList shownCategories() const;
    QAreaSeries* area(const QString& category) const;

protected:
    void redraw() override;
    QPair<double, double> dataXRange() const override;
    void restyle() override;

private:
    void rebuildAreas();
    void replaceAreas();

    BreakdownDataPtr data_;
    std::vector<size_t> shown_;        // indices into data_->categories
    std::vector<QAreaSeries*> areas_;  // one per shown category, bottom-up
    std::vector<BreakdownWindow> windows_;
    axisformat::Unit unit_;
    QValueAxis* xAxis_ = nullptr;
    QValueAxis* yAxis_ = nullptr;
};

}  // namespace trainbench::ui
