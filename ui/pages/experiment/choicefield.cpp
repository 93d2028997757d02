#include "ui/pages/experiment/choicefield.h"

#include <QComboBox>
#include <QSignalBlocker>

namespace trainbench::ui {

using nlohmann::json;

ChoiceField::ChoiceField(const QString& keyPath, const json& schema, QWidget* parent)
    : FieldWidget(keyPath, schema, parent) {
    combo_ = new QComboBox(this);
    for (const json& c : schema.value("choices", json::array())) combo_->addItem(QString::fromStdString(c.get<std::string>()));
    combo_->setMinimumWidth(110);
    combo_->setCurrentIndex(-1);
    // Only a user's choice marks the key set; setValue and reset block the signal.
    connect(combo_, &QComboBox::currentIndexChanged, this, [this] { userEdited(); });
    setEditor(combo_);
}

bool ChoiceField::hasInput() const { return combo_->currentIndex() >= 0; }

json ChoiceField::inputValue() const { return combo_->currentText().toStdString(); }

bool ChoiceField::showValue(const json& v) {
    if (!v.is_string()) return false;
    const int index = combo_->findText(QString::fromStdString(v.get<std::string>()));
    if (index < 0) return false;
    const QSignalBlocker block(combo_);
    combo_->setCurrentIndex(index);
    return true;
}

void ChoiceField::clearInput() {
    const QSignalBlocker block(combo_);
    combo_->setCurrentIndex(-1);
}

void ChoiceField::showPlaceholder(const QString& text) {
    const bool none = schema().value("default", json()).is_null() && schema().value("default_text", "") == "none";
    combo_->setPlaceholderText(none ? tr("choose\u2026") : tr("default: %1").arg(text));
}

}  // namespace trainbench::ui
