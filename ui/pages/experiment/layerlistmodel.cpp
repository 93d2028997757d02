#include "ui/pages/experiment/layerlistmodel.h"

#include <algorithm>

#include <QBrush>
#include <QColor>

namespace trainbench::ui {

using nlohmann::json;
using nlohmann::ordered_json;

LayerListModel::LayerListModel(json layerTypes, QObject* parent)
    : QAbstractListModel(parent), layerTypes_(std::move(layerTypes)) {}

int LayerListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(layers_.size());
}

QString LayerListModel::summary(const ordered_json& layer) {
    if (!layer.is_object()) return QString::fromStdString(layer.dump());
    QString type = layer.contains("type") && layer["type"].is_string() ? QString::fromStdString(layer["type"].get<std::string>())
                                                                       : QStringLiteral("?");
    QStringList keys;
    for (const auto& [key, value] : layer.items())
        if (key != "type") keys << QString::fromStdString(key) + QLatin1Char(' ') +
                                       (value.is_string() ? QString::fromStdString(value.get<std::string>())
                                                          : QString::fromStdString(value.dump()));
    return keys.isEmpty() ? type : type + QStringLiteral("  ") + keys.join(QStringLiteral(", "));
}

QVariant LayerListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const auto row = static_cast<std::size_t>(index.row());
    const bool issue = row < issues_.size() && !issues_[row].isEmpty();
    switch (role) {
        case Qt::DisplayRole: return summary(layers_[row]);
        case Qt::ForegroundRole: return issue ? QVariant(QBrush(QColor(0xc0, 0x39, 0x2b))) : QVariant();
        case Qt::ToolTipRole: {
            if (issue) return issues_[row];
            const ordered_json& layer = layers_[row];
            for (const json& t : layerTypes_)
                if (layer.is_object() && layer.value("type", ordered_json()) == t["type"])
                    return QString::fromStdString(t["description"].get<std::string>());
            return {};
        }
        default: return {};
    }
}

void LayerListModel::setLayers(std::vector<ordered_json> layers) {
    beginResetModel();
    layers_ = std::move(layers);
    issues_.clear();
    endResetModel();
}

void LayerListModel::insertLayer(int row, ordered_json layer) {
    row = std::clamp(row, 0, rowCount());
    beginInsertRows({}, row, row);
    layers_.insert(layers_.begin() + row, std::move(layer));
    if (static_cast<std::size_t>(row) < issues_.size()) issues_.insert(issues_.begin() + row, QString());
    endInsertRows();
}

void LayerListModel::removeLayer(int row) {
    if (row < 0 || row >= rowCount()) return;
    beginRemoveRows({}, row, row);
    layers_.erase(layers_.begin() + row);
    if (static_cast<std::size_t>(row) < issues_.size()) issues_.erase(issues_.begin() + row);
    endRemoveRows();
}

void LayerListModel::moveLayer(int from, int to) {
    if (from < 0 || from >= rowCount() || to < 0 || to >= rowCount() || from == to) return;
    // Qt's destination is the row the item goes before, counted before the move.
    if (!beginMoveRows({}, from, from, {}, to > from ? to + 1 : to)) return;
    ordered_json moving = std::move(layers_[static_cast<std::size_t>(from)]);
    layers_.erase(layers_.begin() + from);
    layers_.insert(layers_.begin() + to, std::move(moving));
    const bool hadIssues = !issues_.empty();
    issues_.clear();  // they were about the old order; the next validation marks them again
    endMoveRows();
    if (hadIssues) emit dataChanged(index(0), index(rowCount() - 1), {Qt::ForegroundRole, Qt::ToolTipRole});
}

void LayerListModel::setLayer(int row, ordered_json layer) {
    if (row < 0 || row >= rowCount()) return;
    layers_[static_cast<std::size_t>(row)] = std::move(layer);
    emit dataChanged(index(row), index(row));
}

void LayerListModel::setIssues(const std::vector<QString>& issues) {
    if (issues == issues_) return;
    issues_ = issues;
    if (rowCount() > 0) emit dataChanged(index(0), index(rowCount() - 1), {Qt::ForegroundRole, Qt::ToolTipRole});
}

}  // namespace trainbench::ui
