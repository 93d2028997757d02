#pragma once
// A string or path key: a line edit (empty means the default, shown as the placeholder); a path has
// a button to pick a file or a folder.
#include "ui/pages/experiment/fieldwidget.h"

class QLineEdit;

namespace trainbench::ui {

class TextField : public FieldWidget {
    Q_OBJECT
public:
    TextField(const QString& keyPath, const nlohmann::json& schema, QWidget* parent = nullptr);
    QLineEdit* lineEdit() const { return edit_; }

protected:
    bool hasInput() const override;
    nlohmann::json inputValue() const override;
    bool showValue(const nlohmann::json& v) override;
    void clearInput() override;
    void showPlaceholder(const QString& text) override;

private:
    void browse(bool folder);

    QLineEdit* edit_;
};

}  // namespace trainbench::ui
