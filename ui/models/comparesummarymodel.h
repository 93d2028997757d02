#pragma once
// Compare page: the runs' outcomes, step-time breakdowns and verdicts side by side: one row per
// figure, one column per run. Built from what the store recorded (summary columns, the steps'
// breakdown columns); a figure a run did not record is left empty.
#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

#include "profiler/store/runrow.h"
#include "profiler/verdict/stepsample.h"

namespace trainbench::ui {

class CompareSummaryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    struct RunFigures {
        profiler::RunRow row;
        std::vector<profiler::StepSample> steps;
    };

    explicit CompareSummaryModel(QObject* parent = nullptr);
    void setRuns(std::vector<RunFigures> runs);
    // The row labels, in order (tests).
    QStringList figures() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Figure {
        QString label;
        QString tooltip;
        std::vector<QString> values;
    };
    std::vector<Figure> figures_;
    QStringList titles_;
};

}  // namespace trainbench::ui
