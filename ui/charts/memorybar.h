#pragma once
// Memory against the device's limit: the footprint's parts (parameters, gradients, optimizer
// state, activations, …) stacked in one bar, the measured peak RSS in a second, and the device's
// capacity as a vertical line, each bar labelled with its total and share of the limit.
#include "ui/charts/chartlabel.h"
#include "ui/charts/chartview.h"

#include <cstdint>
#include <optional>
#include <vector>

QT_BEGIN_NAMESPACE
class QBarSet;
class QBarCategoryAxis;
class QHorizontalStackedBarSeries;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

struct MemoryPart {
    QString name;  // "parameters", "gradients", "optimizer state", "activations", …
    int64_t bytes = 0;
};

struct MemoryFootprint {
    std::vector<MemoryPart> parts;         // the estimate, stacked in this order
    std::optional<int64_t> peakRssBytes;   // measured peak resident set of the run
    std::optional<int64_t> limitBytes;     // the device's memory
    QString deviceName;                    // names the limit line, e.g. "A100 40GB"
};

class MemoryBar : public ChartView {
    Q_OBJECT
public:
    explicit MemoryBar(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    void setFootprint(const MemoryFootprint& footprint);
    const MemoryFootprint& footprint() const { return footprint_; }

    int64_t estimateBytes() const;
    // The total labels drawn at the bars' ends, top bar first (tests).
    QStringList barLabels() const;

    QString csv() const override;
    QString tooltipAt(const QPointF& pos) const override;

protected:
    void redraw() override;
    void restyle() override;

private:
    void placeLabels();
    QString shareOfLimit(double bytes) const;

    MemoryFootprint footprint_;
    QHorizontalStackedBarSeries* bars_ = nullptr;
    std::vector<QBarSet*> sets_;  // one per part, then the peak RSS
    QLineSeries* limitLine_ = nullptr;
    QValueAxis* valueAxis_ = nullptr;
    QBarCategoryAxis* categoryAxis_ = nullptr;
    QValueAxis* rowAxis_ = nullptr;  // hidden twin of the categories, for the limit line
    QStringList categories_;         // bottom-up, as Qt Charts stacks horizontal bars
    std::vector<ChartLabel*> totals_;  // per category
    ChartLabel* limitLabel_ = nullptr;
    double scale_ = 1.0;  // bytes → axis unit
};

}  // namespace trainbench::ui
