#pragma once
// A spin box for a number that may be empty (the key is then left at its default) and may hold any
// number typed, in range or not: the validator, not the widget, says what is wrong, with the CLI's
// words. The arrows step within the schema's range. 64-bit integers and doubles, as text.
#include <optional>

#include <QAbstractSpinBox>

namespace trainbench::ui {

struct NumberRange {
    std::optional<double> minimum, maximum;
    bool exclusiveMinimum = false, exclusiveMaximum = false;
};

class NumberSpinBox : public QAbstractSpinBox {
    Q_OBJECT
public:
    NumberSpinBox(bool integer, NumberRange range, QWidget* parent = nullptr);

    void setText(const QString& text);  // as loaded: no textEdited()
    void setPlaceholderText(const QString& text);
    // Where the arrows start from when the box is empty (the default).
    void setStartValue(double value) { start_ = value; }
    // The number shown, if the text is one.
    std::optional<double> number() const;

    void stepBy(int steps) override;
    QValidator::State validate(QString& input, int& pos) const override;

    // "1e-07", "0.001", "128": as short as round-trips.
    static QString format(double value);

signals:
    void textEdited();  // by the user: typing, arrows, wheel

protected:
    StepEnabled stepEnabled() const override;
    void wheelEvent(QWheelEvent* event) override;

private:
    double step(double from, int direction) const;
    double clamp(double value) const;

    bool integer_;
    NumberRange range_;
    std::optional<double> start_;
    bool settingText_ = false;
};

}  // namespace trainbench::ui
