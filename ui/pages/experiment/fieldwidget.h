#pragma once
// One key of the experiment form: an editor for the key's type, built from its entry in
// app::experimentSchemaJson(), that knows whether the user set the key. A set key is written to the
// file; an unset one shows its default as a placeholder and is left out, so files stay minimal.
#include <optional>

#include <QLabel>
#include <QPointer>
#include <QWidget>

#include <nlohmann/json.hpp>

class QToolButton;

namespace trainbench::ui {

// A JSON string of the schema (a title, a description, an enum value) as a QString.
inline QString qs(const nlohmann::json& j) { return QString::fromStdString(j.get<std::string>()); }

class FieldWidget : public QWidget {
    Q_OBJECT
public:
    // keyPath: where the key sits in a file ("train.batch_size"; a layer's key: "units").
    FieldWidget(QString keyPath, nlohmann::json schema, QWidget* parent = nullptr);
    ~FieldWidget() override;

    const QString& keyPath() const { return keyPath_; }
    const nlohmann::json& schema() const { return schema_; }
    QLabel* label() const { return label_; }  // the form places it; it shares the tooltip
    QWidget* editor() const { return editor_; }

    bool isSet() const;
    // What is written when set: the typed value, or a value loaded from a file that this editor cannot
    // show (a string where a number belongs), kept as it was so the validator can name it.
    nlohmann::json value() const;
    // The same with the order of keys kept where it matters (a layer's "type" first).
    virtual nlohmann::ordered_json orderedValue() const { return nlohmann::ordered_json(value()); }
    // As loaded from a file: the key becomes set. Emits nothing.
    void setValue(const nlohmann::json& value);
    // Back to the default (not written). Emits nothing.
    void reset();

    // The validator's message for this key, or empty: a red frame, and the message leads the tooltip.
    void setIssue(const QString& message);
    const QString& issue() const { return issue_; }

    // "<default>" as a placeholder shows it: the value itself for strings, else the schema's text.
    static QString defaultText(const nlohmann::json& schema);

signals:
    void edited();  // the user changed the value or reset it

protected:
    virtual bool hasInput() const = 0;
    virtual nlohmann::json inputValue() const = 0;
    // Shows v; false if this editor cannot show a value of v's type.
    virtual bool showValue(const nlohmann::json& v) = 0;
    virtual void clearInput() = 0;
    // A placeholder: the default, or what the file holds that the editor cannot show.
    virtual void showPlaceholder(const QString& text) = 0;

    void setEditor(QWidget* editor);  // the subclass's input widget, placed before the reset button
    void setResettable(bool on);      // off: no reset button (a layer list is not cleared by one click)
    void userEdited();                // subclasses call this on every user edit
    void paintEvent(QPaintEvent* event) override;

private:
    void refresh();  // reset button, placeholder, tooltips

    QString keyPath_;
    nlohmann::json schema_;
    QPointer<QLabel> label_;  // no parent until the form places it
    bool resettable_ = true;
    QWidget* editor_ = nullptr;
    QToolButton* resetButton_;
    std::optional<nlohmann::json> foreign_;
    QString issue_;
};

// The editor for a schema entry's type (boolean, integer, number, enum, string, path); nullptr for
// sections, the layer list and the sweep, which the form lays out itself.
FieldWidget* createFieldWidget(const QString& keyPath, const nlohmann::json& schema, QWidget* parent = nullptr);

// The tooltip of a key: path, type, description, range and default (and an issue first, if any).
QString keyTooltip(const QString& keyPath, const nlohmann::json& schema, const QString& issue = {});

}  // namespace trainbench::ui
