#pragma once
// model.layers in the form: the layer list (add by type, remove, move up and down) and, for the
// selected layer, its type and the fields of that type's keys, all from the schema's "layer_types".
#include <vector>

#include "ui/pages/experiment/fieldwidget.h"

class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QListView;
class QPushButton;

namespace trainbench::ui {

class LayerListModel;

class LayerListEditor : public FieldWidget {
    Q_OBJECT
public:
    LayerListEditor(const QString& keyPath, const nlohmann::json& schema, QWidget* parent = nullptr);

    LayerListModel* model() const { return model_; }
    QListView* view() const { return view_; }
    int currentRow() const;
    void setCurrentRow(int row);

    // User actions, also for keyboard shortcuts and tests: each emits edited().
    void addLayer(const QString& type);  // after the current layer, or at the end
    void removeCurrent();
    void moveCurrent(int delta);         // -1 up, +1 down
    // The fields of the current layer's keys ("units", ...), empty if none is selected.
    const std::vector<FieldWidget*>& layerFields() const { return fields_; }
    QComboBox* typeBox() const { return typeBox_; }

    // Issues under model.layers ("model.layers[3].units": "missing; ..."), by key path.
    void setLayerIssues(const std::vector<std::pair<QString, QString>>& issues);

    nlohmann::ordered_json orderedValue() const override;

protected:
    bool hasInput() const override;
    nlohmann::json inputValue() const override;
    bool showValue(const nlohmann::json& v) override;
    void clearInput() override;
    void showPlaceholder(const QString& text) override;

private:
    void showDetails();  // rebuilds the panel of the current layer
    void changeType(const QString& type);
    void fieldEdited(FieldWidget* field);
    void updateButtons();
    nlohmann::json typeSchema(const std::string& type) const;
    nlohmann::ordered_json orderedInput() const;

    nlohmann::json layerTypes_;
    LayerListModel* model_;
    QListView* view_;
    QLabel* emptyHint_;
    QPushButton *removeButton_, *upButton_, *downButton_;
    QGroupBox* details_;
    QFormLayout* detailsForm_;
    QComboBox* typeBox_;
    QLabel* typeNote_;  // what the layer type does
    std::vector<FieldWidget*> fields_;
    std::vector<std::pair<QString, QString>> issues_;
};

}  // namespace trainbench::ui
