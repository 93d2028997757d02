#pragma once
// The experiment form, generated from app::experimentSchemaJson(): a tab per top-level section
// (nested sections as group boxes), the top-level keys in "General", one FieldWidget per key, the
// model's preset-or-layers choice as radio buttons. A key added to the schema appears here with no
// GUI change. The form edits a document: keys it has no field for (unknown ones, typed in the JSON
// view) are kept as they were, so an edit in the form never loses what the validator should name.
#include <map>
#include <vector>

#include <QTabWidget>

#include <nlohmann/json.hpp>

#include "app/experiment/experimenterror.h"

class QAbstractButton;
class QButtonGroup;
class QScrollArea;

namespace trainbench::ui {

class FieldWidget;
class LayerListEditor;

class SchemaForm : public QTabWidget {
    Q_OBJECT
public:
    explicit SchemaForm(nlohmann::json schema, QWidget* parent = nullptr);

    // Every key the user set, in schema order, plus what the last document held that the form has
    // no field for. Sections the form does not show (the sweep) are left out.
    nlohmann::ordered_json toJson() const;
    // Shows a document: its keys set, every other key back to its default. Emits nothing.
    void setJson(const nlohmann::ordered_json& document);

    FieldWidget* field(const QString& keyPath) const;
    const std::vector<FieldWidget*>& fields() const { return fields_; }
    LayerListEditor* layerEditor() const { return layers_; }
    // The radio button that chooses keyPath in a one-of group ("model.preset"), or nullptr.
    QAbstractButton* oneOfButton(const QString& keyPath) const;

    // Marks the fields the validator's issues name (red frame, tooltip) and the tabs holding them;
    // issues elsewhere (a whole section, a text position) mark only their tab, if any.
    void setIssues(const std::vector<app::ExperimentIssue>& issues);
    // Shows the tab of the key an issue names and focuses its field; false if there is none.
    bool focusKey(const QString& where);

signals:
    void edited();  // the user changed a field or a one-of choice

private:
    struct OneOf {
        QButtonGroup* group;
        std::map<QString, QAbstractButton*> buttons;  // by key path
    };

    QWidget* sectionPage(const nlohmann::json& section, const QString& path);
    QWidget* groupBox(const nlohmann::json& section, const QString& path, const QString& title);
    void addField(FieldWidget* field);
    nlohmann::ordered_json build(const nlohmann::json& section, const QString& path,
                                 const nlohmann::ordered_json* base) const;
    int tabOf(const QString& where) const;
    const OneOf* oneOfOf(const QString& keyPath) const;

    nlohmann::json schema_;
    nlohmann::ordered_json base_ = nlohmann::ordered_json::object();
    std::vector<FieldWidget*> fields_;
    std::map<QString, FieldWidget*> byPath_;
    std::map<QString, OneOf> oneOfs_;     // by section path
    std::map<QString, int> tabBySection_;  // top-level key -> tab; "" -> General
    LayerListEditor* layers_ = nullptr;
};

}  // namespace trainbench::ui
