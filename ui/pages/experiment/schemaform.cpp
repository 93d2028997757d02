#include "ui/pages/experiment/schemaform.h"

#include <algorithm>

#include <QButtonGroup>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QRadioButton>
#include <QScrollArea>
#include <QStyle>
#include <QVBoxLayout>

#include "ui/pages/experiment/fieldwidget.h"
#include "ui/pages/experiment/layerlisteditor.h"

namespace trainbench::ui {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {


QString join(const QString& path, const QString& key) { return path.isEmpty() ? key : path + QLatin1Char('.') + key; }

QLabel* descriptionLabel(const json& section) {
    auto* label = new QLabel(qs(section.value("description", json(""))));
    label->setWordWrap(true);
    QPalette pal = label->palette();  // secondary text, but readable (a disabled label is too faint)
    pal.setColor(QPalette::WindowText, pal.color(QPalette::PlaceholderText).darker(140));
    label->setPalette(pal);
    return label;
}

// The value at a key path in a document, or nullptr.
const ordered_json* lookup(const ordered_json& document, const QString& keyPath) {
    const ordered_json* at = &document;
    for (const QString& step : keyPath.split(QLatin1Char('.'))) {
        if (!at->is_object()) return nullptr;
        const auto it = at->find(step.toStdString());
        if (it == at->end()) return nullptr;
        at = &*it;
    }
    return at;
}

// The key a section or top-level key path starts with: "data" for "data.pipeline.prefetch".
QString topKey(const QString& where) {
    const auto end = std::min(where.indexOf(QLatin1Char('.')) < 0 ? where.size() : where.indexOf(QLatin1Char('.')),
                              where.indexOf(QLatin1Char('[')) < 0 ? where.size() : where.indexOf(QLatin1Char('[')));
    return where.left(end);
}

}  // namespace

SchemaForm::SchemaForm(json schema, QWidget* parent) : QTabWidget(parent), schema_(std::move(schema)) {
    setDocumentMode(true);
    json general = {{"key", ""}, {"description", schema_.value("description", "")}, {"keys", json::array()}};
    for (const json& key : schema_["keys"])
        if (key["type"] != "object" && key["type"] != "sweep") general["keys"].push_back(key);
    if (!general["keys"].empty()) {
        tabBySection_[QString()] = addTab(sectionPage(general, QString()), tr("General"));
        setTabToolTip(count() - 1, tr("The experiment's name, description and seed"));
    }
    for (const json& key : schema_["keys"]) {
        if (key["type"] != "object") continue;
        const QString name = qs(key["key"]);
        QString title = name;
        title[0] = title[0].toUpper();
        tabBySection_[name] = addTab(sectionPage(key, name), title);
        setTabToolTip(count() - 1, QStringLiteral("<b>%1</b><p>%2</p>").arg(name, qs(key["description"]).toHtmlEscaped()));
    }
}

QWidget* SchemaForm::sectionPage(const json& section, const QString& path) {
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* content = new QWidget;
    auto* layout = new QVBoxLayout(content);
    if (!path.isEmpty()) layout->addWidget(descriptionLabel(section));

    // The section's own keys, then each nested section, spread over two columns by their rows.
    std::vector<std::pair<QWidget*, int>> groups;
    int ownRows = 0;
    for (const json& key : section["keys"]) ownRows += key["type"] == "object" ? 0 : key["type"] == "layers" ? 8 : 1;
    if (ownRows > 0) groups.emplace_back(groupBox(section, path, path.isEmpty() ? tr("experiment") : path), ownRows);
    for (const json& key : section["keys"])
        if (key["type"] == "object") {
            const QString childPath = join(path, qs(key["key"]));
            groups.emplace_back(groupBox(key, childPath, childPath), 2 + static_cast<int>(key["keys"].size()));
        }
    auto* columns = new QHBoxLayout;
    auto* left = new QVBoxLayout;
    auto* right = new QVBoxLayout;
    int leftRows = 0, rightRows = 0;
    for (const auto& [group, rows] : groups) {
        const bool toLeft = groups.size() == 1 || leftRows <= rightRows;
        // One group of plain fields: not stretched over the whole width (a layer list may use it).
        if (groups.size() == 1 && rows < 8) group->setMaximumWidth(640);
        (toLeft ? left : right)->addWidget(group);
        (toLeft ? leftRows : rightRows) += rows;
    }
    left->addStretch();
    right->addStretch();
    columns->addLayout(left, 1);
    if (groups.size() > 1)
        columns->addLayout(right, 1);
    else
        delete right;  // never placed, so nothing owns it
    layout->addLayout(columns, 1);
    scroll->setWidget(content);
    return scroll;
}

QWidget* SchemaForm::groupBox(const json& section, const QString& path, const QString& title) {
    auto* box = new QGroupBox(title);
    box->setToolTip(qs(section.value("description", json(""))));
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    if (path.contains(QLatin1Char('.'))) form->addRow(descriptionLabel(section));

    const std::vector<std::string> oneOf = section.value("one_of", std::vector<std::string>());
    OneOf* group = nullptr;
    if (!oneOf.empty()) {
        group = &oneOfs_[path];
        group->group = new QButtonGroup(box);
        connect(group->group, &QButtonGroup::buttonClicked, this, &SchemaForm::edited);
    }
    for (const json& key : section["keys"]) {
        if (key["type"] == "object") continue;
        const QString keyPath = join(path, qs(key["key"]));
        FieldWidget* field = nullptr;
        if (key["type"] == "layers")
            field = layers_ = new LayerListEditor(keyPath, key, box);
        else
            field = createFieldWidget(keyPath, key, box);
        if (!field) continue;
        addField(field);
        const bool chosen = std::find(oneOf.begin(), oneOf.end(), key["key"].get<std::string>()) != oneOf.end();
        if (!chosen) {
            form->addRow(field->label(), field);
            continue;
        }
        // One of several keys (preset or layers): a radio button says which one the file gets.
        auto* radio = new QRadioButton(qs(key["key"]), box);
        radio->setProperty("keyPath", keyPath);
        radio->setToolTip(keyTooltip(keyPath, key) + tr("<p>Give exactly one of %1.</p>")
                                                         .arg(QString::fromStdString(json(oneOf).dump())));
        group->group->addButton(radio);
        group->buttons[keyPath] = radio;
        connect(field, &FieldWidget::edited, radio, [radio] { radio->setChecked(true); });
        if (key["type"] == "layers") {
            form->addRow(radio);
            form->addRow(field);
        } else {
            form->addRow(radio, field);
        }
    }
    return box;
}

void SchemaForm::addField(FieldWidget* field) {
    fields_.push_back(field);
    byPath_[field->keyPath()] = field;
    connect(field, &FieldWidget::edited, this, &SchemaForm::edited);
}

FieldWidget* SchemaForm::field(const QString& keyPath) const {
    const auto it = byPath_.find(keyPath);
    return it == byPath_.end() ? nullptr : it->second;
}

const SchemaForm::OneOf* SchemaForm::oneOfOf(const QString& keyPath) const {
    const int dot = keyPath.lastIndexOf(QLatin1Char('.'));
    const auto it = oneOfs_.find(dot < 0 ? QString() : keyPath.left(dot));
    if (it == oneOfs_.end() || !it->second.buttons.count(keyPath)) return nullptr;
    return &it->second;
}

QAbstractButton* SchemaForm::oneOfButton(const QString& keyPath) const {
    const OneOf* group = oneOfOf(keyPath);
    return group ? group->buttons.at(keyPath) : nullptr;
}

ordered_json SchemaForm::toJson() const { return build(schema_, QString(), &base_); }

ordered_json SchemaForm::build(const json& section, const QString& path, const ordered_json* base) const {
    ordered_json out = ordered_json::object();
    std::vector<std::string> known;
    for (const json& key : section["keys"]) {
        const std::string name = key["key"].get<std::string>();
        known.push_back(name);
        const QString keyPath = join(path, QString::fromStdString(name));
        if (key["type"] == "object") {
            const ordered_json* sub = base && base->is_object() && base->contains(name) ? &(*base)[name] : nullptr;
            if (sub && !sub->is_object()) {
                out[name] = *sub;  // not a section: kept for the validator to name
                continue;
            }
            ordered_json child = build(key, keyPath, sub);
            if (!child.empty()) out[name] = std::move(child);
            continue;
        }
        const FieldWidget* f = field(keyPath);
        if (!f || !f->isSet()) continue;
        if (const QAbstractButton* radio = oneOfButton(keyPath); radio && !radio->isChecked()) continue;
        out[name] = f->orderedValue();
    }
    // Keys the schema does not know, as the document had them (the validator suggests the right one).
    if (base && base->is_object())
        for (const auto& [k, v] : base->items())
            if (std::find(known.begin(), known.end(), k) == known.end()) out[k] = v;
    return out;
}

void SchemaForm::setJson(const ordered_json& document) {
    base_ = document.is_object() ? document : ordered_json::object();
    for (FieldWidget* f : fields_) {
        const QSignalBlocker block(f);
        if (const ordered_json* v = lookup(base_, f->keyPath()))
            f->setValue(json(*v));
        else
            f->reset();
    }
    for (auto& [sectionPath, group] : oneOfs_) {
        // The first key of the group the document has is chosen; none if it has none.
        group.group->setExclusive(false);
        for (auto& [keyPath, button] : group.buttons) button->setChecked(false);
        group.group->setExclusive(true);
        const ordered_json* section = sectionPath.isEmpty() ? &base_ : lookup(base_, sectionPath);
        if (!section || !section->is_object()) continue;
        for (QAbstractButton* b : group.group->buttons()) {  // in the schema's order
            const QString keyPath = b->property("keyPath").toString();
            if (section->contains(keyPath.mid(keyPath.lastIndexOf(QLatin1Char('.')) + 1).toStdString())) {
                b->setChecked(true);
                break;
            }
        }
    }
}

int SchemaForm::tabOf(const QString& where) const {
    const QString top = topKey(where);
    if (const auto it = tabBySection_.find(top); it != tabBySection_.end() && !top.isEmpty()) return it->second;
    if (byPath_.count(top) && tabBySection_.count(QString())) return tabBySection_.at(QString());
    return -1;
}

void SchemaForm::setIssues(const std::vector<app::ExperimentIssue>& issues) {
    std::map<FieldWidget*, QString> messages;
    std::vector<std::pair<QString, QString>> layerIssues;
    std::vector<bool> tabs(static_cast<std::size_t>(count()), false);
    for (const app::ExperimentIssue& issue : issues) {
        const QString where = QString::fromStdString(issue.where), message = QString::fromStdString(issue.message);
        if (where.isEmpty() || where.contains(QLatin1Char(':'))) continue;  // the whole file, or a text position
        if (const int tab = tabOf(where); tab >= 0) tabs[static_cast<std::size_t>(tab)] = true;
        if (layers_ && (where == layers_->keyPath() || where.startsWith(layers_->keyPath() + QLatin1Char('[')))) {
            layerIssues.emplace_back(where, message);
        } else if (FieldWidget* f = field(where)) {
            QString& text = messages[f];
            text += (text.isEmpty() ? QString() : QStringLiteral("\n")) + message;
        }
    }
    for (FieldWidget* f : fields_)
        if (f != layers_) f->setIssue(messages.count(f) ? messages[f] : QString());
    if (layers_) layers_->setLayerIssues(layerIssues);
    const QIcon warning = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    for (int i = 0; i < count(); ++i) setTabIcon(i, tabs[static_cast<std::size_t>(i)] ? warning : QIcon());
}

bool SchemaForm::focusKey(const QString& where) {
    const int tab = tabOf(where);
    if (tab < 0) return false;
    setCurrentIndex(tab);
    FieldWidget* target = field(where);
    if (layers_ && where.startsWith(layers_->keyPath() + QLatin1Char('['))) {
        const int start = layers_->keyPath().size() + 1;
        layers_->setCurrentRow(where.mid(start, where.indexOf(QLatin1Char(']'), start) - start).toInt());
        target = layers_;
        for (FieldWidget* f : layers_->layerFields())
            if (f->keyPath() == where) target = f;
    }
    if (!target) return true;
    if (auto* scroll = qobject_cast<QScrollArea*>(widget(tab))) scroll->ensureWidgetVisible(target);
    target->setFocus(Qt::OtherFocusReason);
    return true;
}

}  // namespace trainbench::ui
