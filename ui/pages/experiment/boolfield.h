#pragma once
// A boolean key: a check box. Unset, it shows the default's state with "default" beside it.
#include "ui/pages/experiment/fieldwidget.h"

class QCheckBox;
class QLabel;

namespace trainbench::ui {

class BoolField : public FieldWidget {
    Q_OBJECT
public:
    BoolField(const QString& keyPath, const nlohmann::json& schema, QWidget* parent = nullptr);
    QCheckBox* checkBox() const { return box_; }

protected:
    bool hasInput() const override { return set_; }
    nlohmann::json inputValue() const override;
    bool showValue(const nlohmann::json& v) override;
    void clearInput() override;
    void showPlaceholder(const QString& text) override;

private:
    QCheckBox* box_;
    QLabel* hint_;
    bool set_ = false;
};

}  // namespace trainbench::ui
