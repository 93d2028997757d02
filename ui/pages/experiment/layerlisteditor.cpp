#include "ui/pages/experiment/layerlisteditor.h"

#include <algorithm>

#include <QAction>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListView>
#include <QMenu>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStyledItemDelegate>
#include <QVBoxLayout>

#include "ui/pages/experiment/fieldwidget.h"
#include "ui/pages/experiment/layerlistmodel.h"

namespace trainbench::ui {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// A layer's "type", or "" when it has none (or not a string: the validator says so).
template <class Json>
std::string typeOf(const Json& layer) {
    if (!layer.is_object() || !layer.contains("type") || !layer["type"].is_string()) return {};
    return layer["type"].template get<std::string>();
}
// "3. conv2d  filters 32": the position is the view's, the model's rows do not carry it.
class NumberedDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
        QStyledItemDelegate::initStyleOption(option, index);
        option->text = QStringLiteral("%1.  %2").arg(index.row() + 1).arg(option->text);
    }
};
}  // namespace

LayerListEditor::LayerListEditor(const QString& keyPath, const json& schema, QWidget* parent)
    : FieldWidget(keyPath, schema, parent), layerTypes_(schema.value("layer_types", json::array())) {
    model_ = new LayerListModel(layerTypes_, this);
    auto* box = new QWidget(this);
    auto* layout = new QHBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);

    auto* left = new QVBoxLayout;
    view_ = new QListView(box);
    view_->setModel(model_);
    view_->setItemDelegate(new NumberedDelegate(view_));
    view_->setSpacing(1);
    view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->setMinimumHeight(160);
    left->addWidget(view_, 1);
    emptyHint_ = new QLabel(box);
    emptyHint_->setEnabled(false);
    emptyHint_->setWordWrap(true);
    left->addWidget(emptyHint_);

    auto* buttons = new QHBoxLayout;
    auto* add = new QPushButton(tr("Add"), box);
    auto* menu = new QMenu(add);
    for (const json& t : layerTypes_) {
        QAction* a = menu->addAction(qs(t["type"]), this, [this, type = qs(t["type"])] { addLayer(type); });
        a->setToolTip(qs(t["description"]));
    }
    menu->setToolTipsVisible(true);
    add->setMenu(menu);
    add->setToolTip(tr("Add a layer after the selected one (Insert in the list)"));
    removeButton_ = new QPushButton(tr("Remove"), box);
    removeButton_->setToolTip(tr("Remove the selected layer (Delete in the list)"));
    upButton_ = new QPushButton(tr("Up"), box);
    upButton_->setToolTip(tr("Move the selected layer up (Alt+Up in the list)"));
    downButton_ = new QPushButton(tr("Down"), box);
    downButton_->setToolTip(tr("Move the selected layer down (Alt+Down in the list)"));
    // Keys act in the list only: Delete in a text field must not remove a layer.
    const auto key = [this](const QKeySequence& keys, auto slot) {
        auto* a = new QAction(view_);
        a->setShortcut(keys);
        a->setShortcutContext(Qt::WidgetShortcut);
        connect(a, &QAction::triggered, this, slot);
        view_->addAction(a);
    };
    key(QKeySequence::Delete, [this] { removeCurrent(); });
    key(QKeySequence(Qt::Key_Insert), [add] { add->showMenu(); });
    key(QKeySequence(Qt::ALT | Qt::Key_Up), [this] { moveCurrent(-1); });
    key(QKeySequence(Qt::ALT | Qt::Key_Down), [this] { moveCurrent(+1); });
    for (QPushButton* b : {add, removeButton_, upButton_, downButton_}) buttons->addWidget(b);
    buttons->addStretch();
    left->addLayout(buttons);
    connect(removeButton_, &QPushButton::clicked, this, &LayerListEditor::removeCurrent);
    connect(upButton_, &QPushButton::clicked, this, [this] { moveCurrent(-1); });
    connect(downButton_, &QPushButton::clicked, this, [this] { moveCurrent(+1); });

    details_ = new QGroupBox(box);
    detailsForm_ = new QFormLayout(details_);
    typeBox_ = new QComboBox(details_);
    for (const json& t : layerTypes_) {
        typeBox_->addItem(qs(t["type"]));
        typeBox_->setItemData(typeBox_->count() - 1, qs(t["description"]), Qt::ToolTipRole);
    }
    typeBox_->setToolTip(tr("The layer's type; keys the new type does not have are dropped"));
    connect(typeBox_, &QComboBox::activated, this, [this](int i) { changeType(typeBox_->itemText(i)); });
    detailsForm_->addRow(tr("type"), typeBox_);
    typeNote_ = new QLabel(details_);
    typeNote_->setWordWrap(true);
    QPalette pal = typeNote_->palette();
    pal.setColor(QPalette::WindowText, pal.color(QPalette::PlaceholderText).darker(140));
    typeNote_->setPalette(pal);
    detailsForm_->addRow(typeNote_);

    layout->addLayout(left, 3);
    layout->addWidget(details_, 2, Qt::AlignTop);
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
        showDetails();
        updateButtons();
    });
    setEditor(box);
    setResettable(false);
    showDetails();
    updateButtons();
}

json LayerListEditor::typeSchema(const std::string& type) const {
    for (const json& t : layerTypes_)
        if (t["type"] == type) return t;
    return json::object();  // an unknown type: no keys (the validator names the type)
}

int LayerListEditor::currentRow() const { return view_->currentIndex().isValid() ? view_->currentIndex().row() : -1; }

void LayerListEditor::setCurrentRow(int row) {
    if (row < 0 || row >= model_->rowCount())
        view_->setCurrentIndex({});
    else
        view_->setCurrentIndex(model_->index(row));
    showDetails();
    updateButtons();
}

void LayerListEditor::addLayer(const QString& type) {
    const int row = currentRow() >= 0 ? currentRow() + 1 : model_->rowCount();
    model_->insertLayer(row, ordered_json{{"type", type.toStdString()}});
    setCurrentRow(row);
    userEdited();
}

void LayerListEditor::removeCurrent() {
    const int row = currentRow();
    if (row < 0) return;
    model_->removeLayer(row);
    setCurrentRow(std::min(row, model_->rowCount() - 1));
    userEdited();
}

void LayerListEditor::moveCurrent(int delta) {
    const int row = currentRow(), to = row + delta;
    if (row < 0 || to < 0 || to >= model_->rowCount()) return;
    model_->moveLayer(row, to);
    setCurrentRow(to);
    userEdited();
}

void LayerListEditor::changeType(const QString& type) {
    const int row = currentRow();
    if (row < 0) return;
    const ordered_json& old = model_->layers()[static_cast<std::size_t>(row)];
    ordered_json layer{{"type", type.toStdString()}};
    for (const json& key : typeSchema(type.toStdString()).value("keys", json::array()))
        if (old.is_object() && old.contains(key["key"].get<std::string>()))
            layer[key["key"].get<std::string>()] = old[key["key"].get<std::string>()];
    model_->setLayer(row, layer);
    showDetails();
    userEdited();
}

void LayerListEditor::fieldEdited(FieldWidget* field) {
    const int row = currentRow();
    if (row < 0) return;
    ordered_json layer = model_->layers()[static_cast<std::size_t>(row)];
    const std::string key = field->schema()["key"].get<std::string>();
    if (field->isSet())
        layer[key] = field->orderedValue();
    else
        layer.erase(key);
    model_->setLayer(row, std::move(layer));
    userEdited();
}

void LayerListEditor::showDetails() {
    while (detailsForm_->rowCount() > 2) detailsForm_->removeRow(2);
    fields_.clear();
    const int row = currentRow();
    details_->setEnabled(row >= 0);
    if (row < 0) {
        details_->setTitle(tr("No layer selected"));
        typeNote_->clear();
        const QSignalBlocker block(typeBox_);
        typeBox_->setCurrentIndex(-1);
        return;
    }
    const ordered_json& layer = model_->layers()[static_cast<std::size_t>(row)];
    const std::string type = typeOf(layer);
    details_->setTitle(tr("Layer %1").arg(row + 1));
    {
        const QSignalBlocker block(typeBox_);
        typeBox_->setCurrentIndex(typeBox_->findText(QString::fromStdString(type)));
    }
    const QString prefix = keyPath() + QStringLiteral("[%1].").arg(row);
    const json keys = typeSchema(type).value("keys", json::array());
    typeNote_->setText(QString::fromStdString(typeSchema(type).value("description", std::string())));
    for (const json& key : keys) {
        FieldWidget* field = createFieldWidget(prefix + qs(key["key"]), key, details_);
        if (!field) continue;
        if (layer.contains(key["key"].get<std::string>())) field->setValue(json(layer[key["key"].get<std::string>()]));
        for (const auto& [where, message] : issues_)
            if (where == field->keyPath()) field->setIssue(message);
        connect(field, &FieldWidget::edited, this, [this, field] { fieldEdited(field); });
        detailsForm_->addRow(field->label(), field);
        fields_.push_back(field);
    }
    if (keys.empty() && !type.empty()) {
        auto* none = new QLabel(tr("A %1 layer has no keys.").arg(QString::fromStdString(type)), details_);
        none->setEnabled(false);
        detailsForm_->addRow(none);
    }
}

void LayerListEditor::updateButtons() {
    const int row = currentRow(), count = model_->rowCount();
    removeButton_->setEnabled(row >= 0);
    upButton_->setEnabled(row > 0);
    downButton_->setEnabled(row >= 0 && row + 1 < count);
    emptyHint_->setVisible(count == 0);
}

void LayerListEditor::setLayerIssues(const std::vector<std::pair<QString, QString>>& issues) {
    issues_ = issues;
    std::vector<QString> rows(static_cast<std::size_t>(model_->rowCount()));
    QString own;
    const QString prefix = keyPath() + QLatin1Char('[');
    for (const auto& [where, message] : issues) {
        if (!where.startsWith(prefix)) {
            own += (own.isEmpty() ? QString() : QStringLiteral("\n")) + message;
            continue;
        }
        const int row = where.mid(prefix.size(), where.indexOf(QLatin1Char(']')) - prefix.size()).toInt();
        if (row >= 0 && row < static_cast<int>(rows.size()))
            rows[static_cast<std::size_t>(row)] += (rows[static_cast<std::size_t>(row)].isEmpty() ? QString() : QStringLiteral("\n")) +
                                                   where.mid(keyPath().size()) + QStringLiteral(": ") + message;
    }
    model_->setIssues(rows);
    setIssue(own);
    for (FieldWidget* field : fields_) {
        QString message;
        for (const auto& [where, text] : issues)
            if (where == field->keyPath()) message = text;
        field->setIssue(message);
    }
}

// A layer's keys in the order people write them: "type", then the type's keys, then any others.
static ordered_json normalizedLayer(const json& layer, const json& typeSchema) {
    if (!layer.is_object()) return ordered_json(layer);
    ordered_json out;
    if (layer.contains("type")) out["type"] = ordered_json(layer["type"]);
    for (const json& key : typeSchema.value("keys", json::array()))
        if (layer.contains(key["key"].get<std::string>()))
            out[key["key"].get<std::string>()] = ordered_json(layer[key["key"].get<std::string>()]);
    for (const auto& [k, v] : layer.items())
        if (!out.contains(k)) out[k] = ordered_json(v);
    return out;
}

bool LayerListEditor::hasInput() const { return model_->rowCount() > 0; }

json LayerListEditor::inputValue() const { return json(orderedInput()); }

ordered_json LayerListEditor::orderedInput() const {
    ordered_json out = ordered_json::array();
    for (const ordered_json& layer : model_->layers()) out.push_back(layer);
    return out;
}

ordered_json LayerListEditor::orderedValue() const {
    return hasInput() ? orderedInput() : FieldWidget::orderedValue();
}

bool LayerListEditor::showValue(const json& v) {
    if (!v.is_array()) return false;
    std::vector<ordered_json> layers;
    for (const json& layer : v)
        layers.push_back(normalizedLayer(layer, typeSchema(typeOf(layer))));
    const int row = currentRow();
    model_->setLayers(std::move(layers));
    // The same layer stays selected while the JSON is edited around it.
    setCurrentRow(model_->rowCount() == 0 ? -1 : std::clamp(row, 0, model_->rowCount() - 1));
    return true;
}

void LayerListEditor::clearInput() {
    model_->setLayers({});
    setCurrentRow(-1);
}

void LayerListEditor::showPlaceholder(const QString& text) {
    emptyHint_->setText(text == QLatin1String("none") ? tr("No layers yet: add the first one with Add.") : text);
}

}  // namespace trainbench::ui
