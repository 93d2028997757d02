#include "ui/pages/experiment/boolfield.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>

namespace trainbench::ui {

BoolField::BoolField(const QString& keyPath, const nlohmann::json& schema, QWidget* parent)
    : FieldWidget(keyPath, schema, parent) {
    auto* row = new QWidget(this);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    box_ = new QCheckBox(row);
    hint_ = new QLabel(row);
    hint_->setEnabled(false);  // greyed, like a placeholder
    layout->addWidget(box_);
    layout->addWidget(hint_, 1);
    connect(box_, &QCheckBox::clicked, this, [this] {
        set_ = true;
        userEdited();
    });
    clearInput();
    setEditor(row);
    setFocusProxy(box_);
}

nlohmann::json BoolField::inputValue() const { return box_->isChecked(); }

bool BoolField::showValue(const nlohmann::json& v) {
    if (!v.is_boolean()) return false;
    box_->setChecked(v.get<bool>());
    set_ = true;
    return true;
}

void BoolField::clearInput() {
    set_ = false;
    const auto def = schema().find("default");
    box_->setChecked(def != schema().end() && def->is_boolean() && def->get<bool>());
}

void BoolField::showPlaceholder(const QString& text) {
    hint_->setText(set_ ? QString() : tr("default") + (text == QLatin1String("true") || text == QLatin1String("false")
                                                            ? QString() : QStringLiteral(": ") + text));
}

}  // namespace trainbench::ui
