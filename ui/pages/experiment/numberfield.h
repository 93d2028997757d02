#pragma once
// An integer or number key: a NumberSpinBox with the schema's range; empty means the default.
#include "ui/pages/experiment/fieldwidget.h"

namespace trainbench::ui {

class NumberSpinBox;

class NumberField : public FieldWidget {
    Q_OBJECT
public:
    NumberField(const QString& keyPath, const nlohmann::json& schema, QWidget* parent = nullptr);
    NumberSpinBox* spinBox() const { return spin_; }

protected:
    bool hasInput() const override;
    nlohmann::json inputValue() const override;
    bool showValue(const nlohmann::json& v) override;
    void clearInput() override;
    void showPlaceholder(const QString& text) override;

private:
    NumberSpinBox* spin_;
    bool integer_;
};

}  // namespace trainbench::ui
