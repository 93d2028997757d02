#pragma once
// model.layers as a list model: one row per layer object (kept as JSON, so keys the form does not
// know survive), shown as "conv2d  filters 32, kernel 3". Rows with a validation issue are marked.
// Row numbers are the view's business (they shift on every insert; the data of a row does not).
#include <vector>

#include <QAbstractListModel>

#include <nlohmann/json.hpp>

namespace trainbench::ui {

class LayerListModel : public QAbstractListModel {
    Q_OBJECT
public:
    // layerTypes: the schema's "layer_types" (type, description, keys), for tooltips.
    explicit LayerListModel(nlohmann::json layerTypes, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

    const std::vector<nlohmann::ordered_json>& layers() const { return layers_; }
    void setLayers(std::vector<nlohmann::ordered_json> layers);
    void insertLayer(int row, nlohmann::ordered_json layer);
    void removeLayer(int row);
    // Moves the layer at `from` to position `to` (both in the list before the move).
    void moveLayer(int from, int to);
    void setLayer(int row, nlohmann::ordered_json layer);
    // Issue text per row (empty: none); shown in red with the text as tooltip.
    void setIssues(const std::vector<QString>& issues);

    // "conv2d  filters 32, kernel 3"
    static QString summary(const nlohmann::ordered_json& layer);

private:
    nlohmann::json layerTypes_;
    std::vector<nlohmann::ordered_json> layers_;
    std::vector<QString> issues_;
};

}  // namespace trainbench::ui
