#include "ui/pages/experiment/sweepeditor.h"

#include <QComboBox>
#include <QCompleter>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include "app/experiment/experimentschema.h"
#include "app/experiment/sweep.h"
#include "ui/pages/experiment/fieldwidget.h"

namespace trainbench::ui {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

const char* kIssueStyle = "color: #c0392b";

// The schema entry at a key path ("strategy.replicas"), or null.
json schemaAt(const json& schema, const QString& keyPath) {
    const json* at = &schema;
    for (const QString& step : keyPath.split(QLatin1Char('.'))) {
        const json* next = nullptr;
        if (!at->is_object() || !at->contains("keys")) return json();
        for (const json& k : (*at)["keys"])
            if (k["key"] == step.toStdString()) next = &k;
        if (!next) return json();
        at = next;
    }
    return *at;
}

// Splits at commas outside quotes and brackets.
QStringList splitValues(const QString& text) {
    QStringList out;
    QString current;
    int depth = 0;
    bool quoted = false;
    for (int i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (quoted && c == QLatin1Char('\\') && i + 1 < text.size()) {
            current += c;
            current += text[++i];
            continue;
        }
        if (c == QLatin1Char('"')) quoted = !quoted;
        if (!quoted && (c == QLatin1Char('[') || c == QLatin1Char('{'))) ++depth;
        if (!quoted && (c == QLatin1Char(']') || c == QLatin1Char('}'))) --depth;
        if (c == QLatin1Char(',') && !quoted && depth == 0) {
            out << current.trimmed();
            current.clear();
        } else {
            current += c;
        }
    }
    out << current.trimmed();
    out.removeAll(QString());
    return out;
}

}  // namespace

SweepEditor::SweepEditor(json schema, QWidget* parent) : QWidget(parent), schema_(std::move(schema)) {
    for (const std::string& k : app::sweepableKeys(app::experimentSchema())) keys_ << QString::fromStdString(k);
    auto* layout = new QVBoxLayout(this);
    const json sweep = schemaAt(schema_, QStringLiteral("sweep"));
    auto* intro = new QLabel(tr("Run one experiment per combination of values. Each row is a key of the "
                                "experiment and its values, separated by commas; the runs are named after "
                                "their values and run one after the other."),
                             this);
    intro->setWordWrap(true);
    QPalette pal = intro->palette();
    pal.setColor(QPalette::WindowText, pal.color(QPalette::PlaceholderText).darker(140));
    intro->setPalette(pal);
    intro->setToolTip(keyTooltip(QStringLiteral("sweep"), sweep));
    layout->addWidget(intro);
    rowsLayout_ = new QVBoxLayout;
    rowsLayout_->setSpacing(4);
    layout->addLayout(rowsLayout_);
    auto* add = new QPushButton(tr("Add key"), this);
    add->setToolTip(tr("Add a key to sweep over"));
    connect(add, &QPushButton::clicked, this, [this] { addRow(); });
    auto* addRowLayout = new QHBoxLayout;
    addRowLayout->addWidget(add);
    addRowLayout->addStretch();
    layout->addLayout(addRowLayout);
    issue_ = new QLabel(this);
    issue_->setStyleSheet(QLatin1String(kIssueStyle));
    issue_->setWordWrap(true);
    issue_->hide();
    layout->addWidget(issue_);
    count_ = new QLabel(this);
    count_->setWordWrap(true);
    layout->addWidget(count_);
    points_ = new QListWidget(this);
    points_->setToolTip(tr("The runs of the sweep, in the order they run, named as the run store will list them"));
    points_->setSelectionMode(QAbstractItemView::NoSelection);
    layout->addWidget(points_, 1);
    updateCount();
}

bool SweepEditor::isTextKey(const QString& keyPath) const {
    const json key = schemaAt(schema_, keyPath);
    const std::string type = key.is_object() ? key.value("type", "") : "";
    return type == "string" || type == "path" || type == "enum";
}

ordered_json SweepEditor::parseValues(const QString& text, bool textKey) {
    ordered_json out = ordered_json::array();
    for (const QString& token : splitValues(text)) {
        const std::string s = token.toStdString();
        if (textKey && !token.startsWith(QLatin1Char('"'))) {
            out.push_back(s);
            continue;
        }
        ordered_json v = ordered_json::parse(s, nullptr, false);
        out.push_back(v.is_discarded() ? ordered_json(s) : v);  // not JSON: the validator names it
    }
    return out;
}

QString SweepEditor::valuesText(const ordered_json& values, bool textKey) {
    QStringList parts;
    for (const ordered_json& v : values) {
        const QString plain = v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString();
        const bool raw = textKey && v.is_string() && !plain.isEmpty() && !plain.contains(QLatin1Char(',')) &&
                         !plain.startsWith(QLatin1Char('"')) && plain.trimmed() == plain;
        parts << (raw ? plain : QString::fromStdString(v.dump()));
    }
    return parts.join(QStringLiteral(", "));
}

void SweepEditor::addRow(const QString& keyPath, const QString& values) {
    Row row;
    row.widget = new QWidget(this);
    auto* grid = new QGridLayout(row.widget);
    grid->setContentsMargins(0, 0, 0, 0);
    row.key = new QComboBox(row.widget);
    row.key->setEditable(true);
    row.key->setInsertPolicy(QComboBox::NoInsert);
    row.key->addItems(keys_);
    row.key->setMaxVisibleItems(20);
    row.key->completer()->setFilterMode(Qt::MatchContains);
    row.key->completer()->setCompletionMode(QCompleter::PopupCompletion);
    row.key->lineEdit()->setPlaceholderText(tr("key, e.g. strategy.replicas"));
    row.key->setMinimumWidth(230);
    {
        const QSignalBlocker block(row.key);
        row.key->setCurrentIndex(-1);
        row.key->setEditText(keyPath);
    }
    row.values = new QLineEdit(values, row.widget);
    row.values->setPlaceholderText(tr("values, e.g. 1, 2, 4"));
    row.values->setToolTip(tr("The values to run, separated by commas; text in quotes may hold commas"));
    auto* remove = new QToolButton(row.widget);
    remove->setText(QStringLiteral("\u2715"));
    remove->setAutoRaise(true);
    remove->setToolTip(tr("Remove this key from the sweep"));
    row.issue = new QLabel(row.widget);
    row.issue->setStyleSheet(QLatin1String(kIssueStyle));
    row.issue->setWordWrap(true);
    row.issue->hide();
    grid->addWidget(row.key, 0, 0);
    grid->addWidget(row.values, 0, 1);
    grid->addWidget(remove, 0, 2);
    grid->addWidget(row.issue, 1, 0, 1, 2);
    grid->setColumnStretch(1, 1);
    rowsLayout_->addWidget(row.widget);
    QComboBox* key = row.key;
    const auto keyChanged = [this, key] {
        const QString path = key->currentText().trimmed();
        key->setToolTip(keys_.contains(path) ? keyTooltip(path, schemaAt(schema_, path))
                                             : tr("The key path to sweep, e.g. strategy.replicas"));
        userEdited();
    };
    connect(row.key, &QComboBox::editTextChanged, this, keyChanged);
    connect(row.key, &QComboBox::currentIndexChanged, this, keyChanged);
    connect(row.values, &QLineEdit::textEdited, this, &SweepEditor::userEdited);
    QWidget* widget = row.widget;
    connect(remove, &QToolButton::clicked, this, [this, widget] {
        for (std::size_t i = 0; i < rows_.size(); ++i)
            if (rows_[i].widget == widget) removeRow(static_cast<int>(i));
    });
    rows_.push_back(row);
    key->setToolTip(keys_.contains(keyPath) ? keyTooltip(keyPath, schemaAt(schema_, keyPath))
                                            : tr("The key path to sweep, e.g. strategy.replicas"));
    userEdited();
}

void SweepEditor::removeRow(int row) {
    if (row < 0 || row >= rowCount()) return;
    delete rows_[static_cast<std::size_t>(row)].widget;
    rows_.erase(rows_.begin() + row);
    userEdited();
}

void SweepEditor::userEdited() {
    foreign_.reset();
    updateCount();
    emit edited();
}

ordered_json SweepEditor::toJson() const {
    if (foreign_) return *foreign_;
    if (rows_.empty()) return nullptr;
    ordered_json out = ordered_json::object();
    for (const Row& row : rows_) {
        const QString key = row.key->currentText().trimmed();
        if (!key.isEmpty()) out[key.toStdString()] = parseValues(row.values->text(), isTextKey(key));
    }
    return out;
}

void SweepEditor::setJson(const ordered_json& sweep) {
    const QSignalBlocker block(this);
    while (!rows_.empty()) removeRow(rowCount() - 1);
    bool showable = sweep.is_object();
    if (showable)
        for (const auto& [key, values] : sweep.items()) showable = showable && values.is_array();
    if (showable)
        for (const auto& [key, values] : sweep.items()) {
            const QString path = QString::fromStdString(key);
            addRow(path, valuesText(values, isTextKey(path)));
        }
    // Not rows (an array, a key without a list): kept as it is; the validator says what is wrong.
    foreign_ = showable || sweep.is_null() ? std::nullopt : std::optional<ordered_json>(sweep);
    updateCount();
}

void SweepEditor::setPoints(const std::optional<QStringList>& names) {
    names_ = names;
    updateCount();
}

void SweepEditor::updateCount() {
    std::size_t total = 1;
    for (const Row& row : rows_)
        total *= static_cast<std::size_t>(parseValues(row.values->text(), isTextKey(row.key->currentText().trimmed())).size());
    points_->clear();
    if (rows_.empty() && !foreign_) {
        count_->setText(tr("No sweep: the experiment is one run."));
        points_->hide();
        return;
    }
    const bool named = names_ && names_->size() == static_cast<int>(total) && total > 0;
    points_->setVisible(named);
    if (named) {
        count_->setText(total == 1 ? tr("1 run:") : tr("%1 runs, one after the other:").arg(total));
        points_->addItems(*names_);
    } else {
        count_->setText((total == 1 ? tr("1 run") : tr("%1 runs").arg(total)) +
                        tr("; their names appear when the experiment is valid."));
    }
}

void SweepEditor::setIssues(const std::vector<app::ExperimentIssue>& issues) {
    std::vector<QStringList> byRow(rows_.size());
    QStringList general;
    const QString prefix = QStringLiteral("sweep.");
    for (const app::ExperimentIssue& issue : issues) {
        const QString where = QString::fromStdString(issue.where), message = QString::fromStdString(issue.message);
        if (where == QLatin1String("sweep")) general << message;
        if (!where.startsWith(prefix)) continue;
        const QString rest = where.mid(prefix.size());
        bool placed = false;
        for (std::size_t i = 0; i < rows_.size() && !placed; ++i) {
            const QString key = rows_[i].key->currentText().trimmed();
            if (rest == key || rest.startsWith(key + QLatin1Char('['))) {
                byRow[i] << (rest == key ? message : rest.mid(key.size()) + QStringLiteral(": ") + message);
                placed = true;
            }
        }
        if (!placed) general << rest + QStringLiteral(": ") + message;
    }
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        rows_[i].issue->setText(byRow[i].join(QLatin1Char('\n')));
        rows_[i].issue->setVisible(!byRow[i].isEmpty());
    }
    issue_->setText(general.join(QLatin1Char('\n')));
    issue_->setVisible(!general.isEmpty());
}

}  // namespace trainbench::ui
