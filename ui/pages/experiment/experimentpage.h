#pragma once
// The Experiment page: a form over every key of an experiment file (generated from the schema), the
// same file as JSON kept in step with it both ways, the sweep editor, and the issues of the file as
// `trainbench-cli validate` prints them, checked as you type. Open, Save, Save As, recent files, and
// Run, which saves the file and asks the main window to run it (runRequested).
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <nlohmann/json.hpp>

#include "ui/pages/experiment/experimentvalidator.h"

class QAction;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QMenu;

namespace trainbench::ui {

class JsonView;
class SchemaForm;
class SweepEditor;

class ExperimentPage : public QWidget {
    Q_OBJECT
public:
    explicit ExperimentPage(QWidget* parent = nullptr);

    // Reads an experiment file into the page (the form shows it if it is JSON). False, with
    // lastError() set, if it cannot be read.
    bool loadFile(const QString& path);
    // Writes the JSON text to path (atomically) and makes it the current file.
    bool saveFile(const QString& path);
    const QString& lastError() const { return lastError_; }

    QString json() const;                // the file's text, as the JSON view holds it
    void setJson(const QString& text);   // a new text: the form follows at once
    void newExperiment();                // a small valid experiment, no file

    const QString& currentFile() const { return currentFile_; }
    bool isModified() const { return modified_; }
    bool isValid() const { return valid_; }  // the current text passed validation
    QString title() const;                   // "fmnist-cnn.json*"
    // Unsaved changes: asks Save / Discard / Cancel. True if the page may be left (closing the window).
    bool confirmDiscard();

    // Recent files, newest first (QSettings group "experiment", key "recentFiles").
    static QStringList recentFiles();

    // For the main window's menus and tests. Shortcuts work while the page has focus:
    // Ctrl+N, Ctrl+O, Ctrl+S, Ctrl+Shift+S, Ctrl+R.
    QAction* newAction() const { return newAction_; }
    QAction* openAction() const { return openAction_; }
    QAction* saveAction() const { return saveAction_; }
    QAction* saveAsAction() const { return saveAsAction_; }
    QAction* runAction() const { return runAction_; }

    SchemaForm* form() const { return form_; }
    SweepEditor* sweepEditor() const { return sweep_; }
    JsonView* jsonView() const { return json_; }
    QListWidget* issueList() const { return issues_; }

signals:
    // Run was pressed on a valid experiment, now saved at experimentFilePath: the main window
    // launches `trainbench-cli run experimentFilePath`.
    void runRequested(const QString& experimentFilePath);
    void titleChanged(const QString& title);
    void validated(bool valid);  // a check of the current text finished

private:
    void buildActions();
    QWidget* buildToolbar();
    void formEdited();           // the form or the sweep changed: rewrite the JSON
    void jsonEdited();           // the user typed in the JSON view
    void syncFormFromJson();     // the JSON parsed: show it in the form
    void scheduleValidation();
    void showValidation(const ValidationResult& result);
    void issueActivated(QListWidgetItem* item);
    void setModified(bool modified);
    void setCurrentFile(const QString& path);
    void fillRecentMenu();
    QString sourceName() const;
    void openDialog();
    bool saveAsDialog();
    void run();

    SchemaForm* form_;
    SweepEditor* sweep_;
    JsonView* json_;
    QListWidget* issues_;
    QLabel* fileLabel_;
    QLabel* statusLabel_;
    QMenu* recentMenu_;
    QAction *newAction_, *openAction_, *saveAction_, *saveAsAction_, *runAction_;
    QTimer jsonTimer_, validateTimer_;
    ExperimentValidator validator_;
    QString currentFile_, lastError_;
    bool modified_ = false;
    bool valid_ = false;
    bool rewriting_ = false;  // the form is rewriting the JSON view: not a user edit
};

}  // namespace trainbench::ui
