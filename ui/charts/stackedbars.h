#pragma once
// Horizontal stacked bars of seconds: one bar per row (first at the top), stacked from named parts
// in a fixed order and colour (chartstyle's categories), each labelled with its total at its end;
// the tooltip names the row and the part under the mouse with its seconds and share. RankBars (a
// distributed step per rank) and the layout planner's step parts are both drawn with it.
#include "ui/charts/chartlabel.h"
#include "ui/charts/chartview.h"

#include <vector>

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QBarSet;
class QHorizontalStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

struct StackPart {
    QString name;      // legend and tooltip: "compute", "idle (bubble, waiting)"
    QString category;  // chartstyle::categoryColor's name: "forward", "communication"
    QString column;    // CSV column: "compute_seconds"
};

struct StackedRow {
    QString label;                // "stage 0", "d16 p8 t8 b1 selective v4"
    std::vector<double> seconds;  // one per part, in the parts' order
    double total() const;
    bool operator==(const StackedRow&) const = default;
};

class StackedBars : public ChartView {
    Q_OBJECT
public:
    // `rowColumn`: the CSV's first column ("rank"); `axisTitle`: the value axis's, before its unit.
    StackedBars(std::vector<StackPart> parts, QString rowColumn, QString axisTitle, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    void setRows(std::vector<StackedRow> rows);
    const std::vector<StackedRow>& rows() const { return rows_; }
    const std::vector<StackPart>& parts() const { return parts_; }
    // The total labels at the bars' ends, top bar (the first row) first (tests).
    QStringList barLabels() const;
    // The bar series (tests map values to positions with it).
    QHorizontalStackedBarSeries* series() const { return bars_; }

    QString csv() const override;
    QString tooltipAt(const QPointF& pos) const override;

protected:
    void redraw() override;
    void restyle() override;

private:
    void placeLabels();

    std::vector<StackPart> parts_;
    QString rowColumn_, axisTitle_;
    std::vector<StackedRow> rows_;
    QHorizontalStackedBarSeries* bars_ = nullptr;
    std::vector<QBarSet*> sets_;  // one per part
    QValueAxis* valueAxis_ = nullptr;
    QBarCategoryAxis* categoryAxis_ = nullptr;
    std::vector<ChartLabel*> totals_;  // per bar, bottom-up as Qt Charts stacks them
    double scale_ = 1000.0;  // seconds → axis unit (ms or s)
};

}  // namespace trainbench::ui
