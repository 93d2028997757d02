#pragma once
// Data scaling: test error (or test loss) against the examples trained on, on a log axis (powers
// of two, labelled with the counts), one curve per family of runs that differ only in
// data.fraction and seed: each size's mean with a bar from its lowest to its highest run, and the
// fitted power law dashed. Fed a profiler::DataScaling (profiler/compare/datascaling.h).
#include "profiler/compare/datascaling.h"
#include "ui/charts/chartlabel.h"
#include "ui/charts/chartview.h"

QT_BEGIN_NAMESPACE
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

class DataScalingChart : public ChartView {
    Q_OBJECT
public:
    explicit DataScalingChart(QWidget* parent = nullptr);
    ~DataScalingChart() override;

    void setTitle(const QString& title);
    void setScaling(const profiler::DataScaling& scaling);
    const profiler::DataScaling& scaling() const { return data_; }
    // One line per curve on its power law ("label: test error ≈ ..."), or why there is none.
    QStringList fitTexts() const;

    QString csv() const override;
    QString tooltipAt(const QPointF& pos) const override;

protected:
    void redraw() override;
    void restyle() override;

private:
    struct Curve;
    void clearCurves();
    bool percent() const { return data_.metric == profiler::DataScalingMetric::TestError; }

    profiler::DataScaling data_;
    std::vector<Curve> curves_;
    QLogValueAxis* xAxis_ = nullptr;
    QValueAxis* yAxis_ = nullptr;
    ChartLabel* emptyNote_ = nullptr;
};

}  // namespace trainbench::ui
