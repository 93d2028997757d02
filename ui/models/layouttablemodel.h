#pragma once
// Plan page, Layouts tab: the layout planner's ranked layouts as table rows, with the figures
// `trainbench-cli plan-layouts` prints (Calculon's): step time and its parts, memory per GPU by
// part, model and hardware TFLOP/s per GPU, dollars per step. Numbers are formatted as the CLI
// formats them; SortRole gives them as numbers.
#include <QAbstractTableModel>

#include <vector>

#include "app/plan/layoutplan.h"

namespace trainbench::ui {

class LayoutTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Rank, Layout, Step, Compute, Recompute, Bubble, TensorComm, PipelineComm, DataComm, Weights, Gradients,
        Optimizer, Activations, Memory, ModelTflops, HardwareTflops, DollarsPerStep, ColumnCount
    };
    enum Role { SortRole = Qt::UserRole + 1 };

    explicit LayoutTableModel(QObject* parent = nullptr);

    void setLayouts(std::vector<app::LayoutFigures> layouts);
    const std::vector<app::LayoutFigures>& layouts() const { return layouts_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<app::LayoutFigures> layouts_;
};

}  // namespace trainbench::ui
