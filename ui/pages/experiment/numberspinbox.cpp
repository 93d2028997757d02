#include "ui/pages/experiment/numberspinbox.h"

#include <charconv>
#include <cmath>

#include <QLineEdit>
#include <QWheelEvent>

namespace trainbench::ui {

namespace {
std::optional<double> parseNumber(const QString& text) {
    const std::string s = text.trimmed().toStdString();
    if (s.empty()) return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
    return value;
}
}  // namespace

NumberSpinBox::NumberSpinBox(bool integer, NumberRange range, QWidget* parent)
    : QAbstractSpinBox(parent), integer_(integer), range_(range) {
    setFocusPolicy(Qt::StrongFocus);  // no value changes by scrolling past the form
    setAccelerated(true);
    setCorrectionMode(QAbstractSpinBox::CorrectToPreviousValue);
    // textChanged, not textEdited: the spin box's own fix-ups on focus-out are the user's edits too.
    connect(lineEdit(), &QLineEdit::textChanged, this, [this] {
        if (!settingText_) emit textEdited();
    });
}

QString NumberSpinBox::format(double value) {
    char buf[64];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    return QString::fromLatin1(buf, static_cast<int>(result.ptr - buf));
}

void NumberSpinBox::setText(const QString& text) {
    settingText_ = true;
    lineEdit()->setText(text);
    settingText_ = false;
}

void NumberSpinBox::setPlaceholderText(const QString& text) { lineEdit()->setPlaceholderText(text); }

std::optional<double> NumberSpinBox::number() const { return parseNumber(text()); }

QValidator::State NumberSpinBox::validate(QString& input, int& /*pos*/) const {
    if (input.trimmed().isEmpty() || parseNumber(input)) return QValidator::Acceptable;
    // What may still become a number: "-", "1e", "0.", "+".
    for (QChar c : input)
        if (!c.isDigit() && !QStringLiteral("+-.eE ").contains(c)) return QValidator::Invalid;
    return QValidator::Intermediate;
}

double NumberSpinBox::clamp(double value) const {
    if (range_.minimum && value < *range_.minimum) value = *range_.minimum;
    if (range_.maximum && value > *range_.maximum) value = *range_.maximum;
    return value;
}

double NumberSpinBox::step(double from, int direction) const {
    if (integer_) return from + direction;
    // A tenth of the value's order of magnitude: 0.001 -> 0.0011, 0.9 -> 0.91, 30 -> 31; from 0, by
    // 0.01 or 0.1. Counted in whole units of that step and divided by an exact power of ten, so the
    // result is the decimal a user would type (0.00021, not 0.00021000000000000003).
    const int exponent = from == 0 ? (range_.maximum && *range_.maximum <= 1 ? -2 : -1)
                                   : static_cast<int>(std::floor(std::log10(std::fabs(from)))) - 1;
    const double scale = std::pow(10.0, std::abs(exponent));
    if (exponent < 0) return (std::round(from * scale) + direction) / scale;
    return (std::round(from / scale) + direction) * scale;
}

void NumberSpinBox::stepBy(int steps) {
    const std::optional<double> current = number();
    double value = current ? *current : clamp(start_.value_or(0));
    const int direction = steps > 0 ? 1 : -1;
    for (int i = 0; i < std::abs(steps); ++i) {
        double next = clamp(step(value, direction));
        // An exclusive bound is never reached: stay put rather than step onto it.
        if ((range_.exclusiveMinimum && range_.minimum && next <= *range_.minimum) ||
            (range_.exclusiveMaximum && range_.maximum && next >= *range_.maximum))
            next = value;
        value = next;
    }
    if (!current || value != *current) lineEdit()->setText(format(value));  // emits textEdited
}

QAbstractSpinBox::StepEnabled NumberSpinBox::stepEnabled() const {
    if (isReadOnly()) return StepNone;
    const std::optional<double> v = number();
    if (!v) return StepUpEnabled | StepDownEnabled;
    StepEnabled out = StepNone;
    if (!range_.maximum || *v < *range_.maximum) out |= StepUpEnabled;
    if (!range_.minimum || *v > *range_.minimum) out |= StepDownEnabled;
    return out;
}

void NumberSpinBox::wheelEvent(QWheelEvent* event) {
    if (hasFocus())
        QAbstractSpinBox::wheelEvent(event);
    else
        event->ignore();  // let the page scroll
}

}  // namespace trainbench::ui
