#pragma once
// The planner's scatter: each configuration's time to the target (x) against its cost (y), marked by
// how it was obtained (measured, emulated, projected), with the deadline and the budget drawn as
// lines and the corner that meets both shaded. Configurations without a time or a cost are not
// drawn; a note says how many.
#include <optional>
#include <vector>

#include <QRectF>

#include "ui/charts/chartview.h"

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QLineSeries;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

class ChartLabel;

struct PlanChartPoint {
    QString label;
    QString source;  // "measured", "emulated" or "projected"
    double seconds = 0.0;
    double cost = 0.0;
    bool meetsBoth = false;
};

class PlanChart : public ChartView {
    Q_OBJECT
public:
    explicit PlanChart(QWidget* parent = nullptr);
    ~PlanChart() override;

    // `notDrawn`: configurations left out for want of a time or a cost.
    void setPlan(std::vector<PlanChartPoint> points, std::optional<double> deadlineSeconds, std::optional<double> budget,
                 int notDrawn);

    const std::vector<PlanChartPoint>& points() const { return points_; }
    // The shaded corner in data units (seconds, USD); empty when neither limit is set (tests).
    QRectF feasibleCorner() const;
    bool deadlineDrawn() const;
    bool budgetDrawn() const;

    QString csv() const override;
    QString tooltipAt(const QPointF& pos) const override;

protected:
    void redraw() override;
    void restyle() override;

private:
    void placeLabels();
    QPointF positionOf(const PlanChartPoint& p) const;

    std::vector<PlanChartPoint> points_;
    std::optional<double> deadline_, budget_;
    int notDrawn_ = 0;
    double timeScale_ = 1.0;
    double xMax_ = 1.0, yMax_ = 1.0;
    QValueAxis* xAxis_ = nullptr;
    QValueAxis* yAxis_ = nullptr;
    QScatterSeries* measured_ = nullptr;
    QScatterSeries* emulated_ = nullptr;
    QScatterSeries* projected_ = nullptr;
    QLineSeries* deadlineLine_ = nullptr;
    QLineSeries* budgetLine_ = nullptr;
    QAreaSeries* corner_ = nullptr;
    std::vector<ChartLabel*> labels_;
    ChartLabel* note_ = nullptr;
};

}  // namespace trainbench::ui
