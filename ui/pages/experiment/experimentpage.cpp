#include "ui/pages/experiment/experimentpage.h"

#include <QAction>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QStandardPaths>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "app/experiment/experiment.h"
#include "app/experiment/experimentschema.h"
#include "app/experiment/jsontext.h"
#include "ui/pages/experiment/fieldwidget.h"
#include "ui/pages/experiment/jsonformat.h"
#include "ui/pages/experiment/jsonview.h"
#include "ui/pages/experiment/recentfiles.h"
#include "ui/pages/experiment/schemaform.h"
#include "ui/pages/experiment/sweepeditor.h"

namespace trainbench::ui {

using nlohmann::ordered_json;

namespace {

// The text as JSON for the form, or discarded when it is not JSON or passes the experiment limits
// (size, nesting): the form copies the document, and copying recurses once per level. The issue
// list says what is wrong, as the CLI would.
ordered_json parsedWithinLimits(const std::string& text) {
    if (app::checkExperimentLimits(text)) return ordered_json(ordered_json::value_t::discarded);
    return ordered_json::parse(text, nullptr, false);
}
constexpr int kDebounceMs = 150;

// "<file>:<line>:<column>" at the end of an issue's where: a JSON syntax error.
const QRegularExpression& positionPattern() {
    static const QRegularExpression re(QStringLiteral(":(\\d+):(\\d+)$"));
    return re;
}

QLabel* heading(const QString& text, QWidget* parent) {
    auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(text), parent);
    label->setContentsMargins(2, 4, 2, 2);
    return label;
}
}  // namespace

ExperimentPage::ExperimentPage(QWidget* parent) : QWidget(parent) {
    const nlohmann::json schema = app::experimentSchemaJson();
    form_ = new SchemaForm(schema, this);
    sweep_ = new SweepEditor(schema, this);
    auto* sweepScroll = new QScrollArea;
    sweepScroll->setWidgetResizable(true);
    sweepScroll->setFrameShape(QFrame::NoFrame);
    sweepScroll->setWidget(sweep_);
    form_->addTab(sweepScroll, tr("Sweep"));
    form_->setTabToolTip(form_->count() - 1, tr("Run one experiment per combination of values (the file's \"sweep\" section)"));

    json_ = new JsonView(this);
    issues_ = new QListWidget(this);
    issues_->setWordWrap(true);
    issues_->setIconSize(QSize(16, 16));
    issues_->setToolTip(tr("What is wrong with the experiment, as trainbench-cli validate prints it. "
                           "Double-click (or Enter) to go to the key."));

    buildActions();
    auto* jsonPane = new QWidget(this);
    auto* jsonLayout = new QVBoxLayout(jsonPane);
    jsonLayout->setContentsMargins(0, 0, 0, 0);
    jsonLayout->setSpacing(0);
    jsonLayout->addWidget(heading(tr("JSON"), jsonPane));
    jsonLayout->addWidget(json_);
    auto* issuePane = new QWidget(this);
    auto* issueLayout = new QVBoxLayout(issuePane);
    issueLayout->setContentsMargins(0, 0, 0, 0);
    issueLayout->setSpacing(0);
    issueLayout->addWidget(heading(tr("Issues"), issuePane));
    issueLayout->addWidget(issues_);
    auto* right = new QSplitter(Qt::Vertical, this);
    right->addWidget(jsonPane);
    right->addWidget(issuePane);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(form_);
    split->addWidget(right);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({600, 400});  // proportions until shown; the form's size hint would take nearly all
    split->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buildToolbar());
    layout->addWidget(split, 1);

    jsonTimer_.setSingleShot(true);
    jsonTimer_.setInterval(kDebounceMs);
    validateTimer_.setSingleShot(true);
    validateTimer_.setInterval(kDebounceMs);
    connect(&jsonTimer_, &QTimer::timeout, this, &ExperimentPage::syncFormFromJson);
    connect(&validateTimer_, &QTimer::timeout, this, [this] { validator_.request(json(), sourceName()); });
    connect(&validator_, &ExperimentValidator::validated, this, &ExperimentPage::showValidation);
    connect(form_, &SchemaForm::edited, this, &ExperimentPage::formEdited);
    connect(sweep_, &SweepEditor::edited, this, &ExperimentPage::formEdited);
    connect(json_, &QPlainTextEdit::textChanged, this, &ExperimentPage::jsonEdited);
    connect(issues_, &QListWidget::itemActivated, this, &ExperimentPage::issueActivated);
    newExperiment();
}

void ExperimentPage::buildActions() {
    const auto make = [this](const QString& text, QStyle::StandardPixmap icon, const QKeySequence& keys,
                             const QString& tip) {
        auto* a = new QAction(style()->standardIcon(icon), text, this);
        a->setShortcut(keys);
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        a->setToolTip(QStringLiteral("%1 (%2)").arg(tip, keys.toString(QKeySequence::NativeText)));
        addAction(a);
        return a;
    };
    newAction_ = make(tr("New"), QStyle::SP_FileIcon, QKeySequence::New, tr("Start a new experiment"));
    openAction_ = make(tr("Open\u2026"), QStyle::SP_DialogOpenButton, QKeySequence::Open, tr("Open an experiment file"));
    saveAction_ = make(tr("Save"), QStyle::SP_DialogSaveButton, QKeySequence::Save, tr("Save the experiment file"));
    saveAsAction_ = make(tr("Save As\u2026"), QStyle::SP_DialogSaveButton, QKeySequence(tr("Ctrl+Shift+S")),
                         tr("Save the experiment under another name"));
    runAction_ = make(tr("Run"), QStyle::SP_MediaPlay, QKeySequence(tr("Ctrl+R")),
                      tr("Save and run the experiment (each point of a sweep is a run)"));
    runAction_->setEnabled(false);
    connect(newAction_, &QAction::triggered, this, [this] {
        if (confirmDiscard()) newExperiment();
    });
    connect(openAction_, &QAction::triggered, this, &ExperimentPage::openDialog);
    connect(saveAction_, &QAction::triggered, this, [this] {
        if (currentFile_.isEmpty()) {
            saveAsDialog();
        } else if (!saveFile(currentFile_)) {
            QMessageBox::warning(this, tr("Save experiment"), lastError_);
        }
    });
    connect(saveAsAction_, &QAction::triggered, this, &ExperimentPage::saveAsDialog);
    connect(runAction_, &QAction::triggered, this, &ExperimentPage::run);
}

QWidget* ExperimentPage::buildToolbar() {
    auto* bar = new QWidget(this);
    auto* layout = new QHBoxLayout(bar);
    layout->setContentsMargins(0, 0, 0, 0);
    const auto button = [bar, layout](QAction* action, Qt::ToolButtonStyle style = Qt::ToolButtonTextBesideIcon) {
        auto* b = new QToolButton(bar);
        b->setDefaultAction(action);
        b->setToolButtonStyle(style);
        b->setAutoRaise(true);
        layout->addWidget(b);
        return b;
    };
    button(newAction_);
    QToolButton* open = button(openAction_);
    recentMenu_ = new QMenu(open);
    connect(recentMenu_, &QMenu::aboutToShow, this, &ExperimentPage::fillRecentMenu);
    open->setMenu(recentMenu_);
    open->setPopupMode(QToolButton::MenuButtonPopup);
    button(saveAction_);
    button(saveAsAction_);
    fileLabel_ = new QLabel(bar);
    fileLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addSpacing(12);
    layout->addWidget(fileLabel_, 1);
    statusLabel_ = new QLabel(bar);
    layout->addWidget(statusLabel_);
    QToolButton* run = button(runAction_);
    QFont bold = run->font();
    bold.setBold(true);
    run->setFont(bold);
    return bar;
}

QString ExperimentPage::json() const { return json_->toPlainText(); }

void ExperimentPage::setJson(const QString& text) {
    rewriting_ = true;
    json_->setPlainText(text);
    rewriting_ = false;
    jsonTimer_.stop();
    const ordered_json doc = parsedWithinLimits(text.toStdString());
    if (doc.is_discarded() || !doc.is_object()) {  // a new text: the form must not show the old one
        form_->setJson(ordered_json::object());
        sweep_->setJson(nullptr);
    }
    syncFormFromJson();
    valid_ = false;
    runAction_->setEnabled(false);
    setModified(true);
    scheduleValidation();
}

void ExperimentPage::newExperiment() {
    setCurrentFile(QString());
    setJson(QString::fromStdString(formatExperimentJson(ordered_json{{"model", {{"preset", "mlp"}}}})));
    setModified(false);
}

void ExperimentPage::formEdited() {
    ordered_json doc = form_->toJson();
    const ordered_json sweep = sweep_->toJson();
    if (!sweep.is_null()) doc["sweep"] = sweep;
    rewriting_ = true;
    json_->replaceText(QString::fromStdString(formatExperimentJson(doc)));
    rewriting_ = false;
    jsonTimer_.stop();  // the text came from the form; nothing to bring back
    valid_ = false;
    runAction_->setEnabled(false);
    setModified(true);
    scheduleValidation();
}

void ExperimentPage::jsonEdited() {
    if (rewriting_) return;
    valid_ = false;
    runAction_->setEnabled(false);
    setModified(true);
    jsonTimer_.start();
    scheduleValidation();
}

void ExperimentPage::syncFormFromJson() {
    const ordered_json doc = parsedWithinLimits(json().toStdString());
    // Not JSON (yet): the form keeps its last state; the issues list gives the line and column.
    if (doc.is_discarded() || !doc.is_object()) return;
    form_->setJson(doc);
    sweep_->setJson(doc.contains("sweep") ? doc["sweep"] : ordered_json());
}

void ExperimentPage::scheduleValidation() { validateTimer_.start(); }

QString ExperimentPage::sourceName() const {
    return currentFile_.isEmpty() ? QStringLiteral("untitled.json") : currentFile_;
}

void ExperimentPage::showValidation(const ValidationResult& result) {
    if (result.text != json().toStdString()) return;  // the text changed since; a newer check is on its way
    valid_ = result.valid;
    runAction_->setEnabled(valid_);
    issues_->clear();
    int errorLine = 0;
    for (std::size_t i = 0; i < result.issues.size(); ++i) {
        auto* item = new QListWidgetItem(style()->standardIcon(QStyle::SP_MessageBoxWarning), result.lines[static_cast<int>(i)]);
        const QString where = QString::fromStdString(result.issues[i].where);
        item->setData(Qt::UserRole, where);
        item->setToolTip(result.lines[static_cast<int>(i)]);
        issues_->addItem(item);
        if (const auto m = positionPattern().match(where); m.hasMatch() && errorLine == 0) errorLine = m.captured(1).toInt();
    }
    json_->setErrorLine(errorLine);
    form_->setIssues(result.issues);
    sweep_->setIssues(result.issues);
    sweep_->setPoints(valid_ ? std::optional<QStringList>(result.pointNames) : std::nullopt);
    bool sweepIssue = false;
    for (const app::ExperimentIssue& issue : result.issues) sweepIssue = sweepIssue || issue.where.rfind("sweep", 0) == 0;
    form_->setTabIcon(form_->count() - 1, sweepIssue ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : QIcon());
    if (valid_) {
        statusLabel_->setText(QStringLiteral("<span style='color:#2e7d32'>%1</span>")
                                  .arg(result.sweep ? tr("\u2713 valid: a sweep of %1 runs").arg(result.pointNames.size())
                                                    : tr("\u2713 valid")));
    } else if (errorLine > 0) {
        statusLabel_->setText(tr("<span style='color:#c0392b'>not JSON at line %1: the form shows the last JSON</span>")
                                  .arg(errorLine));
    } else {
        const auto n = result.issues.size();
        statusLabel_->setText(QStringLiteral("<span style='color:#c0392b'>%1</span>")
                                  .arg(n == 1 ? tr("1 issue") : tr("%1 issues").arg(n)));
    }
    emit validated(valid_);
}

void ExperimentPage::issueActivated(QListWidgetItem* item) {
    const QString where = item->data(Qt::UserRole).toString();
    if (const auto m = positionPattern().match(where); m.hasMatch()) {
        json_->goTo(m.captured(1).toInt(), m.captured(2).toInt());
    } else if (where == QLatin1String("sweep") || where.startsWith(QLatin1String("sweep."))) {
        form_->setCurrentIndex(form_->count() - 1);
    } else {
        form_->focusKey(where);
    }
}

bool ExperimentPage::loadFile(const QString& path) {
    QString text;
    try {  // refused from its size before it is read, as the CLI does
        text = QString::fromStdString(app::readExperimentFile(path.toStdString()));
    } catch (const app::ExperimentError& e) {
        lastError_ = tr("Cannot open %1").arg(QString::fromStdString(e.what()));
        return false;
    }
    setCurrentFile(QFileInfo(path).absoluteFilePath());  // first: relative paths resolve against its folder
    setJson(text);
    setModified(false);
    addRecentExperimentFile(currentFile_);
    return true;
}

bool ExperimentPage::saveFile(const QString& path) {
    QSaveFile file(path);  // a temporary file renamed over the old one: whole or not at all
    if (!file.open(QIODevice::WriteOnly) || file.write(json().toUtf8()) < 0 || !file.commit()) {
        lastError_ = tr("Cannot save %1: %2").arg(path, file.errorString());
        return false;
    }
    const bool moved = QFileInfo(path).absoluteFilePath() != currentFile_;
    setCurrentFile(QFileInfo(path).absoluteFilePath());
    setModified(false);
    addRecentExperimentFile(currentFile_);
    if (moved) scheduleValidation();  // relative paths now mean something else
    return true;
}

QString ExperimentPage::title() const {
    return (currentFile_.isEmpty() ? tr("untitled") : QFileInfo(currentFile_).fileName()) +
           (modified_ ? QStringLiteral("*") : QString());
}

void ExperimentPage::setModified(bool modified) {
    if (modified == modified_) return;
    modified_ = modified;
    setCurrentFile(currentFile_);
}

void ExperimentPage::setCurrentFile(const QString& path) {
    currentFile_ = path;
    fileLabel_->setText(QStringLiteral("<b>%1</b>&nbsp;&nbsp;<span style='color:gray'>%2</span>")
                            .arg(title().toHtmlEscaped(),
                                 path.isEmpty() ? tr("not saved yet") : QDir::toNativeSeparators(path).toHtmlEscaped()));
    emit titleChanged(title());
}

QStringList ExperimentPage::recentFiles() { return recentExperimentFiles(); }

void ExperimentPage::fillRecentMenu() {
    recentMenu_->clear();
    const QStringList files = recentFiles();
    for (const QString& path : files) {
        QAction* a = recentMenu_->addAction(QFileInfo(path).fileName(), this, [this, path] {
            if (confirmDiscard() && !loadFile(path)) QMessageBox::warning(this, tr("Open experiment"), lastError_);
        });
        a->setToolTip(path);
        a->setEnabled(QFileInfo::exists(path));
    }
    if (files.isEmpty()) recentMenu_->addAction(tr("No recent files"))->setEnabled(false);
    recentMenu_->setToolTipsVisible(true);
}

bool ExperimentPage::confirmDiscard() {
    if (!modified_) return true;
    const auto answer = QMessageBox::question(this, tr("Unsaved experiment"),
                                              tr("%1 has changes that are not saved. Save them first?").arg(title()),
                                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Discard) return true;
    if (answer != QMessageBox::Save) return false;
    return currentFile_.isEmpty() ? saveAsDialog() : saveFile(currentFile_);
}

void ExperimentPage::openDialog() {
    if (!confirmDiscard()) return;
    QString dir = currentFile_.isEmpty() ? QString() : QFileInfo(currentFile_).absolutePath();
    if (dir.isEmpty() && !recentFiles().isEmpty()) dir = QFileInfo(recentFiles().front()).absolutePath();
    if (dir.isEmpty() && QFileInfo::exists(QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments")))
        dir = QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments");
    const QString path = QFileDialog::getOpenFileName(this, tr("Open experiment"), dir,
                                                      tr("Experiment files (*.json);;All files (*)"));
    if (!path.isEmpty() && !loadFile(path)) QMessageBox::warning(this, tr("Open experiment"), lastError_);
}

bool ExperimentPage::saveAsDialog() {
    QString path = QFileDialog::getSaveFileName(this, tr("Save experiment as"),
                                                currentFile_.isEmpty() ? tr("experiment.json") : currentFile_,
                                                tr("Experiment files (*.json)"));
    if (path.isEmpty()) return false;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    if (saveFile(path)) return true;
    QMessageBox::warning(this, tr("Save experiment"), lastError_);
    return false;
}

void ExperimentPage::run() {
    if (!valid_) return;
    QString path = currentFile_;
    if (path.isEmpty()) {
        // Never saved: kept with the application's data, so the run can always find its file again.
        const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/experiments");
        QDir().mkpath(dir);
        const FieldWidget* name = form_->field(QStringLiteral("name"));
        QString stem = name && name->isSet() && name->value().is_string()
                           ? QString::fromStdString(name->value().get<std::string>())
                           : QStringLiteral("experiment");
        stem.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
        path = dir + QLatin1Char('/') + stem + QDateTime::currentDateTime().toString(QStringLiteral("-yyyyMMdd-HHmmss")) +
               QStringLiteral(".json");
    }
    if ((modified_ || currentFile_.isEmpty()) && !saveFile(path)) {
        QMessageBox::warning(this, tr("Run experiment"), lastError_);
        return;
    }
    emit runRequested(currentFile_);
}

}  // namespace trainbench::ui
