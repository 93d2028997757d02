#pragma once
// An enum key: a combo box of the schema's choices. No current item means the default, shown as the
// placeholder ("default: adam").
#include "ui/pages/experiment/fieldwidget.h"

class QComboBox;

namespace trainbench::ui {

class ChoiceField : public FieldWidget {
    Q_OBJECT
public:
    ChoiceField(const QString& keyPath, const nlohmann::json& schema, QWidget* parent = nullptr);
    QComboBox* comboBox() const { return combo_; }

protected:
    bool hasInput() const override;
    nlohmann::json inputValue() const override;
    bool showValue(const nlohmann::json& v) override;
    void clearInput() override;
    void showPlaceholder(const QString& text) override;

private:
    QComboBox* combo_;
};

}  // namespace trainbench::ui
