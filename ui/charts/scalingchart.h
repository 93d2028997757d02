#pragma once
// Scaling across device or worker counts: measured throughput against the ideal linear line
// (from each curve's smallest count) with the efficiency labelled at every point; or, in
// time-to-target mode, the time to the accuracy target against devices with its ideal
// (time × devices constant). One curve per ScalingPoint::series, e.g. per strategy.
#include "ui/charts/chartlabel.h"
#include "ui/charts/chartview.h"
#include "ui/charts/scalingefficiency.h"

QT_BEGIN_NAMESPACE
class QLineSeries;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

class ScalingChart : public ChartView {
    Q_OBJECT
public:
    enum class Mode { Throughput, TimeToTarget };

    explicit ScalingChart(QWidget* parent = nullptr);
    ~ScalingChart() override;

    void setTitle(const QString& title);
    void setPoints(const std::vector<ScalingPoint>& points);
    void setMode(Mode mode);
    Mode mode() const { return mode_; }
    // "samples/s" unless told otherwise; "workers" instead of "devices" for multi-worker sweeps.
    void setThroughputUnit(const QString& unit);
    void setDeviceNoun(const QString& plural);

    const std::vector<ScalingRow>& rows() const { return rows_; }
    // The efficiency labels drawn next to the points, in row order (tests).
    QStringList pointLabels() const;

    QString csv() const override;
    QString tooltipAt(const QPointF& pos) const override;

protected:
    void redraw() override;
    void restyle() override;

private:
    struct Curve;
    void rebuild();
    void placeLabels();
    QString rowTooltip(const ScalingRow& row, bool ideal) const;

    std::vector<ScalingRow> rows_;
    std::vector<Curve> curves_;
    std::vector<ChartLabel*> labels_;  // one per drawn row
    std::vector<int> labelCurves_;  // the colour index of each label's curve
    ChartLabel* emptyNote_ = nullptr;
    Mode mode_ = Mode::Throughput;
    QString unit_ = QStringLiteral("samples/s");
    QString deviceNoun_ = QStringLiteral("devices");
    double timeScale_ = 1.0;
    QValueAxis* xAxis_ = nullptr;
    QValueAxis* yAxis_ = nullptr;
};

}  // namespace trainbench::ui
