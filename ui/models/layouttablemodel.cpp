#include "ui/models/layouttablemodel.h"

#include "app/plan/layoutplan.h"

namespace trainbench::ui {

namespace {

struct ColumnInfo {
    const char* header;
    const char* tip;
};
constexpr ColumnInfo kColumns[LayoutTableModel::ColumnCount] = {
    {"#", "Rank"},
    {"Layout", "d data, p pipeline, t tensor degrees; b sequences per micro-batch; recomputation; v model chunks per GPU "
               "(interleaved 1F1B; without v: 1F1B)"},
    {"Step s", "Seconds per step on the busiest GPU: the sum of the parts that follow, the optimizer and the overhead"},
    {"Compute", "Forward and backward, seconds per step"},
    {"Recompute", "Forward passes made again in backward, seconds per step"},
    {"Bubble", "The pipeline's fill and drain, seconds per step"},
    {"TP comm", "Tensor-parallel all-reduces on the critical path, seconds per step"},
    {"PP comm", "Activations and gradients sent between pipeline stages, seconds per step"},
    {"DP comm", "The exposed part of the data-parallel gradient all-reduce, seconds per step"},
    {"Weights GiB", "Weights per GPU"},
    {"Grads GiB", "Gradients per GPU"},
    {"Optim GiB", "Optimizer state per GPU"},
    {"Activ GiB", "Activations kept for backward per GPU"},
    {"Memory GiB", "All of it per GPU"},
    {"TFLOP/s/GPU", "Model FLOPs (no recomputation) per second per GPU"},
    {"HW TFLOP/s", "Hardware FLOPs (with recomputation, as Narayanan et al. count) per second per GPU"},
    {"$/step", "Dollars per step for all the GPUs at the catalog's price"},
};

double value(const app::LayoutFigures& e, int column, size_t rank) {
    switch (column) {
        case LayoutTableModel::Rank: return static_cast<double>(rank + 1);
        case LayoutTableModel::Step: return e.step_seconds;
        case LayoutTableModel::Compute: return e.compute_seconds;
        case LayoutTableModel::Recompute: return e.recompute_seconds;
        case LayoutTableModel::Bubble: return e.bubble_seconds;
        case LayoutTableModel::TensorComm: return e.tensor_comm_seconds;
        case LayoutTableModel::PipelineComm: return e.pipeline_comm_seconds;
        case LayoutTableModel::DataComm: return e.data_comm_seconds;
        case LayoutTableModel::Weights: return e.weight_bytes;
        case LayoutTableModel::Gradients: return e.gradient_bytes;
        case LayoutTableModel::Optimizer: return e.optimizer_bytes;
        case LayoutTableModel::Activations: return e.activation_bytes;
        case LayoutTableModel::Memory: return e.memory_bytes;
        case LayoutTableModel::ModelTflops: return e.model_tflops_per_gpu;
        case LayoutTableModel::HardwareTflops: return e.hardware_tflops_per_gpu;
        case LayoutTableModel::DollarsPerStep: return e.usd_per_step;
        default: return 0.0;
    }
}

QString text(const app::LayoutFigures& e, int column, size_t rank) {
    const double v = value(e, column, rank);
    switch (column) {
        case LayoutTableModel::Rank: return QString::number(rank + 1);
        case LayoutTableModel::Layout: return QString::fromStdString(e.layout);
        case LayoutTableModel::Weights:
        case LayoutTableModel::Gradients:
        case LayoutTableModel::Optimizer:
        case LayoutTableModel::Activations:
        case LayoutTableModel::Memory: return QString::fromStdString(app::layoutGib(v));
        case LayoutTableModel::ModelTflops:
        case LayoutTableModel::HardwareTflops: return QString::number(v, 'f', 1);
        case LayoutTableModel::DollarsPerStep: return QString::number(v, 'f', 2);
        default: return QString::fromStdString(app::layoutSeconds(v));
    }
}

}  // namespace

LayoutTableModel::LayoutTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void LayoutTableModel::setLayouts(std::vector<app::LayoutFigures> layouts) {
    beginResetModel();
    layouts_ = std::move(layouts);
    endResetModel();
}

int LayoutTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(layouts_.size());
}

int LayoutTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant LayoutTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const size_t row = static_cast<size_t>(index.row());
    const app::LayoutFigures& e = layouts_[row];
    switch (role) {
        case Qt::DisplayRole: return text(e, index.column(), row);
        case SortRole:
            return index.column() == Layout ? QVariant(QString::fromStdString(e.layout))
                                            : QVariant(value(e, index.column(), row));
        case Qt::TextAlignmentRole:
            return index.column() == Layout ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                            : QVariant(Qt::AlignRight | Qt::AlignVCenter);
        default: return {};
    }
}

QVariant LayoutTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return tr(kColumns[section].header);
    if (role == Qt::ToolTipRole) return tr(kColumns[section].tip);
    return {};
}

}  // namespace trainbench::ui
