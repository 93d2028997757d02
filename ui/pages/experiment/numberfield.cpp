#include "ui/pages/experiment/numberfield.h"

#include <charconv>
#include <cstdint>

#include "ui/pages/experiment/numberspinbox.h"

namespace trainbench::ui {

using nlohmann::json;

namespace {
NumberRange rangeOf(const json& schema) {
    NumberRange r;
    if (schema.contains("minimum")) r.minimum = schema["minimum"].get<double>();
    if (schema.contains("maximum")) r.maximum = schema["maximum"].get<double>();
    r.exclusiveMinimum = schema.value("exclusive_minimum", false);
    r.exclusiveMaximum = schema.value("exclusive_maximum", false);
    return r;
}
}  // namespace

NumberField::NumberField(const QString& keyPath, const json& schema, QWidget* parent)
    : FieldWidget(keyPath, schema, parent), integer_(schema.value("type", "") == "integer") {
    spin_ = new NumberSpinBox(integer_, rangeOf(schema), this);
    spin_->setMinimumWidth(110);
    if (const auto def = schema.find("default"); def != schema.end() && def->is_number())
        spin_->setStartValue(def->get<double>());
    connect(spin_, &NumberSpinBox::textEdited, this, &NumberField::userEdited);
    setEditor(spin_);
}

bool NumberField::hasInput() const { return !spin_->text().trimmed().isEmpty(); }

json NumberField::inputValue() const {
    const std::string text = spin_->text().trimmed().toStdString();
    // Whole numbers as JSON integers (also for number keys: "timeout_s": 60, not 60.0).
    std::int64_t i = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
    if (ec == std::errc() && end == text.data() + text.size()) return i;
    if (const auto d = spin_->number()) return *d;
    return text;  // not a number: the validator names it ("expected a positive integer, got string ...")
}

bool NumberField::showValue(const json& v) {
    if (!v.is_number()) return false;
    spin_->setText(v.is_number_float() ? NumberSpinBox::format(v.get<double>()) : QString::fromStdString(v.dump()));
    return true;
}

void NumberField::clearInput() { spin_->setText(QString()); }

void NumberField::showPlaceholder(const QString& text) { spin_->setPlaceholderText(text); }

}  // namespace trainbench::ui
