// The Experiment page as a user meets it: issues as `trainbench-cli validate` prints them, checked as
// you type; the JSON view and the form kept in step; a syntax error that leaves the form alone; the
// sweep editor; save, open, recent files; Run. TRAINBENCH_UI_SNAPSHOTS=<dir> also saves PNGs of the page.
#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.h"
#include "ui/pages/experiment/experimentpage.h"
#include "ui/pages/experiment/fieldwidget.h"
#include "ui/pages/experiment/jsonview.h"
#include "ui/pages/experiment/layerlisteditor.h"
#include "ui/pages/experiment/numberfield.h"
#include "ui/pages/experiment/numberspinbox.h"
#include "ui/pages/experiment/schemaform.h"
#include "ui/pages/experiment/sweepeditor.h"

using namespace trainbench;
using nlohmann::json;

namespace {

const QString kExperiments = QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments/");

QStringList issueLines(const ui::ExperimentPage& page) {
    QStringList out;
    for (int i = 0; i < page.issueList()->count(); ++i) out << page.issueList()->item(i)->text();
    return out;
}

// Waits for the check of the page's current text (debounced, off the GUI thread).
bool waitValidated(ui::ExperimentPage& page) {
    QSignalSpy spy(&page, &ui::ExperimentPage::validated);
    return spy.wait(5000);
}

void snapshot(QWidget& w, const QString& name) {
    const QString dir = qEnvironmentVariable("TRAINBENCH_UI_SNAPSHOTS");
    if (dir.isEmpty()) return;
    QTest::qWait(50);  // layouts settle, widgets added to visible parents are shown
    QVERIFY(w.grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png")));
}

void typeNumber(ui::ExperimentPage& page, const QString& keyPath, const QString& text) {
    auto* field = qobject_cast<ui::NumberField*>(page.form()->field(keyPath));
    QVERIFY(field);
    field->spinBox()->setText(QString());
    QTest::keyClicks(field->spinBox(), text);
}

}  // namespace

class ExperimentPageTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);  // settings and app data in ~/.qttest, not the user's
        QSettings().remove(QStringLiteral("experiment"));
    }

    void anOutOfRangeValueShowsTheClisMessage() {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("mlp.json"));
        QVERIFY(QFile::copy(kExperiments + QStringLiteral("fmnist-mlp.json"), path));
        ui::ExperimentPage page;
        page.resize(1200, 800);
        QVERIFY(page.loadFile(path));
        QVERIFY(waitValidated(page));
        QVERIFY(page.isValid());
        QVERIFY(page.runAction()->isEnabled());

        typeNumber(page, QStringLiteral("train.batch_size"), QStringLiteral("0"));
        QVERIFY(!page.runAction()->isEnabled());  // nothing runs while the edit is unchecked
        QVERIFY(waitValidated(page));
        QVERIFY(!page.isValid());
        const QString expected = path + QStringLiteral(": train.batch_size: must be >= 1 and <= 65536, got 0");
        QCOMPARE(issueLines(page), QStringList{expected});
        QCOMPARE(page.form()->field(QStringLiteral("train.batch_size"))->issue(),
                 QStringLiteral("must be >= 1 and <= 65536, got 0"));
        QVERIFY(page.form()->field(QStringLiteral("train.batch_size"))->editor()->toolTip().contains(QStringLiteral("got 0")));
        QVERIFY(!page.runAction()->isEnabled());
        // Activating the issue shows the key's field.
        emit page.issueList()->itemActivated(page.issueList()->item(0));
        QCOMPARE(page.form()->tabText(page.form()->currentIndex()), QStringLiteral("Train"));
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        snapshot(page, QStringLiteral("experiment-invalid"));

        // The same text, word for word, as the CLI prints for the saved file.
        QVERIFY(page.saveFile(path));
#ifdef TRAINBENCH_CLI_PATH
        QProcess cli;
        cli.start(QStringLiteral(TRAINBENCH_CLI_PATH), {QStringLiteral("validate"), path});
        QVERIFY(cli.waitForFinished(30000));
        QCOMPARE(cli.exitCode(), 2);
        QCOMPARE(QString::fromUtf8(cli.readAllStandardError()).trimmed(), expected);
#endif
    }

    void jsonEditsUpdateTheFormAndUnknownKeysGetASuggestion() {
        ui::ExperimentPage page;
        page.jsonView()->setPlainText(QStringLiteral(R"({
  "model": {"preset": "cnn"},
  "train": {"epochs": 3, "bach_size": 64}
})"));
        QVERIFY(waitValidated(page));
        QCOMPARE(issueLines(page),
                 QStringList{QStringLiteral("untitled.json: train.bach_size: unknown key; did you mean 'batch_size'?")});
        // The parts that are right are in the form already.
        QCOMPARE(page.form()->field(QStringLiteral("train.epochs"))->value(), json(3));
        QCOMPARE(page.form()->field(QStringLiteral("model.preset"))->value(), json("cnn"));
        // The Train tab is marked; the Model tab is not.
        int train = -1, model = -1;
        for (int i = 0; i < page.form()->count(); ++i) {
            if (page.form()->tabText(i) == QLatin1String("Train")) train = i;
            if (page.form()->tabText(i) == QLatin1String("Model")) model = i;
        }
        QVERIFY(train >= 0 && model >= 0);
        QVERIFY(!page.form()->tabIcon(train).isNull());
        QVERIFY(page.form()->tabIcon(model).isNull());
    }

    void aSyntaxErrorShowsLineAndColumnAndLeavesTheForm() {
        ui::ExperimentPage page;
        page.setJson(QStringLiteral("{\n  \"model\": {\"preset\": \"mlp\"},\n  \"train\": {\"epochs\": 3}\n}\n"));
        QVERIFY(waitValidated(page));
        QCOMPARE(page.form()->field(QStringLiteral("train.epochs"))->value(), json(3));
        const QString broken = QStringLiteral("{\n  \"model\": {\"preset\": \"mlp\"},\n  \"train\": {\"epochs\": 4,}\n}\n");
        page.jsonView()->setPlainText(broken);
        QVERIFY(waitValidated(page));
        // Line 3, column 25: where the parser (and the CLI) says the text stops being JSON.
        QStringList lines = issueLines(page);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines[0].startsWith(QStringLiteral("untitled.json:3:25: syntax error")), qPrintable(lines[0]));
        try {
            app::parseExperiment(broken.toStdString(), "untitled.json");
            QFAIL("the broken text parsed");
        } catch (const app::ExperimentError& e) {
            QCOMPARE(lines[0], QString::fromStdString(e.what()));
        }
        QCOMPARE(page.jsonView()->errorLine(), 3);
        QCOMPARE(page.form()->field(QStringLiteral("train.epochs"))->value(), json(3));  // as it was
        QVERIFY(!page.runAction()->isEnabled());
    }

    // Text over the experiment limits: the form is left alone (copying a deep document recursed
    // once per level and ended the window), the issue list says which limit, as the CLI does; a
    // file over the size limit is refused before it is read.
    void textOverTheLimitsLeavesTheFormAndSaysWhy() {
        ui::ExperimentPage page;
        page.setJson(QStringLiteral(R"({"model": {"preset": "mlp"}, "train": {"epochs": 3}})"));
        QVERIFY(waitValidated(page));
        const QString deep = QStringLiteral(R"({"model": {"preset": "mlp"}, "train": {"epochs": )") +
                             QString(200000, QLatin1Char('[')) + QString(200000, QLatin1Char(']')) +
                             QStringLiteral("}}");
        page.setJson(deep);
        QVERIFY(waitValidated(page));
        const QStringList lines = issueLines(page);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines[0].contains(QStringLiteral("nesting deeper than 32 levels")), qPrintable(lines[0]));
        QVERIFY(!page.runAction()->isEnabled());

        QTemporaryDir tmp;
        const QString big = tmp.filePath(QStringLiteral("big.json"));
        QFile f(big);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(R"({"name": ")") + QByteArray(2 << 20, 'x') + QByteArray(R"("})"));
        f.close();
        QVERIFY(!page.loadFile(big));
        QVERIFY2(page.lastError().contains(QStringLiteral("over the limit of 1048576 bytes")), qPrintable(page.lastError()));
    }

    void formEditsRewriteTheJsonWithOnlyTheKeysSet() {
        ui::ExperimentPage page;
        typeNumber(page, QStringLiteral("train.epochs"), QStringLiteral("2"));
        const json doc = json::parse(page.json().toStdString());
        QCOMPARE(doc, json::parse(R"({"model": {"preset": "mlp"}, "train": {"epochs": 2}})"));
        QVERIFY(page.isModified());
        QVERIFY(waitValidated(page));
        QVERIFY(page.isValid());
    }

    void aTypedNumberSurvivesLeavingTheField() {
        ui::ExperimentPage page;
        page.show();
        QVERIFY(QTest::qWaitForWindowActive(&page));
        auto* field = qobject_cast<ui::NumberField*>(page.form()->field(QStringLiteral("optimizer.learning_rate")));
        page.form()->setCurrentIndex(3);
        field->spinBox()->setFocus();
        QTest::keyClicks(field->spinBox(), QStringLiteral("2e-4"));
        page.jsonView()->setFocus();
        QCOMPARE(field->spinBox()->text(), QStringLiteral("2e-4"));
        QCOMPARE(json::parse(page.json().toStdString())["optimizer"]["learning_rate"], json(2e-4));
        // The arrows step from the value by a tenth of its magnitude, within the range.
        field->spinBox()->stepBy(1);
        QCOMPARE(field->spinBox()->text(), QStringLiteral("0.00021"));
        QCOMPARE(json::parse(page.json().toStdString())["optimizer"]["learning_rate"], json(2.1e-4));
        auto* replicas = qobject_cast<ui::NumberField*>(page.form()->field(QStringLiteral("strategy.replicas")));
        replicas->spinBox()->stepBy(-5);  // from the default, 1, which is the minimum
        QCOMPARE(replicas->value(), json(1));
        replicas->spinBox()->stepBy(100);
        QCOMPARE(replicas->value(), json(64));
    }

    void theSweepEditorWritesTheSectionAndNamesThePoints() {
        ui::ExperimentPage page;
        page.setJson(QStringLiteral(R"({"name": "x", "model": {"preset": "mlp"}, "strategy": {"type": "mirrored"}})"));
        QVERIFY(waitValidated(page));
        ui::SweepEditor* sweep = page.sweepEditor();
        QCOMPARE(sweep->rowCount(), 0);
        sweep->addRow();
        sweep->keyBox(0)->setEditText(QStringLiteral("strategy.replicas"));
        QTest::keyClicks(sweep->valuesEdit(0), QStringLiteral("1, 2, 4"));
        QVERIFY(waitValidated(page));
        const json doc = json::parse(page.json().toStdString());
        QCOMPARE(doc["sweep"], json::parse(R"({"strategy.replicas": [1, 2, 4]})"));
        QVERIFY(page.isValid());
        QCOMPARE(sweep->pointList()->count(), 3);
        QCOMPARE(sweep->pointList()->item(0)->text(), QStringLiteral("x-replicas1"));
        QCOMPARE(sweep->pointList()->item(2)->text(), QStringLiteral("x-replicas4"));
        QCOMPARE(sweep->countLabel()->text(), QStringLiteral("3 runs, one after the other:"));
        page.resize(1200, 800);
        page.form()->setCurrentIndex(page.form()->count() - 1);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        snapshot(page, QStringLiteral("experiment-sweep-valid"));

        // A second key, text values: the points multiply, named in row order.
        sweep->addRow(QStringLiteral("optimizer.type"), QStringLiteral("adam, sgd"));
        QVERIFY(waitValidated(page));
        QCOMPARE(json::parse(page.json().toStdString())["sweep"]["optimizer.type"], json::parse(R"(["adam", "sgd"])"));
        QCOMPARE(sweep->pointList()->count(), 6);
        QCOMPARE(sweep->pointList()->item(1)->text(), QStringLiteral("x-replicas1-type_sgd"));

        // A bad value is named with its key path under its row.
        sweep->valuesEdit(0)->clear();
        QTest::keyClicks(sweep->valuesEdit(0), QStringLiteral("1, 0"));
        QVERIFY(waitValidated(page));
        QVERIFY(!page.isValid());
        QVERIFY(issueLines(page).contains(QStringLiteral("untitled.json: sweep.strategy.replicas[1]: must be >= 1 and <= 64, got 0")));
        QVERIFY(!page.form()->tabIcon(page.form()->count() - 1).isNull());
        snapshot(page, QStringLiteral("experiment-sweep-invalid"));

        // Loaded from JSON, the rows come back as they were written.
        ui::ExperimentPage fresh;
        fresh.setJson(page.json());
        QCOMPARE(fresh.sweepEditor()->rowCount(), 2);
        QCOMPARE(fresh.sweepEditor()->valuesEdit(1)->text(), QStringLiteral("adam, sgd"));
        QCOMPARE(json(fresh.sweepEditor()->toJson()), json(sweep->toJson()));
    }

    void saveOpenAndRecentFiles() {
        QTemporaryDir tmp;
        ui::ExperimentPage page;
        page.setJson(QStringLiteral(R"({"model": {"preset": "logreg"}})"));
        const QString path = tmp.filePath(QStringLiteral("saved.json"));
        QVERIFY(page.saveFile(path));
        QVERIFY(!page.isModified());
        QCOMPARE(page.title(), QStringLiteral("saved.json"));
        QCOMPARE(ui::ExperimentPage::recentFiles().front(), path);

        ui::ExperimentPage other;
        QVERIFY(other.loadFile(path));
        QCOMPARE(other.json(), page.json());
        QCOMPARE(other.form()->field(QStringLiteral("model.preset"))->value(), json("logreg"));
        QVERIFY(!other.loadFile(tmp.filePath(QStringLiteral("missing.json"))));
        QVERIFY(other.lastError().contains(QStringLiteral("missing.json")));
    }

    void keyboardShortcutsSaveAndRun() {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("k.json"));
        ui::ExperimentPage page;
        page.setJson(QStringLiteral(R"({"model": {"preset": "logreg"}})"));
        QVERIFY(page.saveFile(path));
        QCOMPARE(page.saveAction()->shortcut(), QKeySequence(QKeySequence::Save));
        QCOMPARE(page.saveAsAction()->shortcut(), QKeySequence(QStringLiteral("Ctrl+Shift+S")));
        QCOMPARE(page.openAction()->shortcut(), QKeySequence(QKeySequence::Open));
        QCOMPARE(page.runAction()->shortcut(), QKeySequence(QStringLiteral("Ctrl+R")));
        page.show();
        QVERIFY(QTest::qWaitForWindowActive(&page));
        page.jsonView()->setFocus();
        typeNumber(page, QStringLiteral("train.epochs"), QStringLiteral("2"));
        QVERIFY(page.isModified());
        page.form()->field(QStringLiteral("train.epochs"))->setFocus();
        QTest::keyClick(&page, Qt::Key_S, Qt::ControlModifier);
        QVERIFY(!page.isModified());
        QFile saved(path);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QCOMPARE(json::parse(saved.readAll().toStdString())["train"]["epochs"], json(2));

        QVERIFY(waitValidated(page));
        QSignalSpy run(&page, &ui::ExperimentPage::runRequested);
        QTest::keyClick(&page, Qt::Key_R, Qt::ControlModifier);
        QCOMPARE(run.size(), 1);
        QCOMPARE(run.front().front().toString(), path);
    }

    void runSavesAnUnsavedExperimentUnderAppData() {
        ui::ExperimentPage page;
        page.setJson(QStringLiteral(R"({"name": "quick one", "model": {"preset": "logreg"}})"));
        QSignalSpy run(&page, &ui::ExperimentPage::runRequested);
        page.runAction()->trigger();
        QCOMPARE(run.size(), 0);  // not checked yet: Run waits for a valid experiment
        QVERIFY(waitValidated(page));
        QVERIFY(page.runAction()->isEnabled());
        page.runAction()->trigger();
        QCOMPARE(run.size(), 1);
        const QString path = run.front().front().toString();
        QVERIFY2(path.startsWith(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                                 QStringLiteral("/experiments/quick_one-")), qPrintable(path));
        QFile saved(path);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(saved.readAll()), page.json());
        QCOMPARE(page.currentFile(), path);
        QVERIFY(QFile::remove(path));
    }

    void looksTidyWithAShippedExperiment() {
        ui::ExperimentPage page;
        page.resize(1200, 800);
        QVERIFY(page.loadFile(kExperiments + QStringLiteral("fmnist-cnn.json")));
        QVERIFY(waitValidated(page));
        QVERIFY(page.isValid());
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        for (int tab = 0; tab < page.form()->count(); ++tab) {
            page.form()->setCurrentIndex(tab);
            snapshot(page, QStringLiteral("experiment-tab%1-%2").arg(tab).arg(page.form()->tabText(tab).toLower()));
        }
        // A model of its own: the layer editor with a layer selected.
        page.setJson(QStringLiteral(R"({"name": "my-cnn", "model": {"layers": [
            {"type": "conv2d", "filters": 32, "kernel": 3}, {"type": "relu"}, {"type": "maxpool2d", "size": 2},
            {"type": "flatten"}, {"type": "dense", "units": 128}, {"type": "relu"}, {"type": "dense"}]}})"));
        QVERIFY(waitValidated(page));
        QCOMPARE(issueLines(page), QStringList{kExperiments + QStringLiteral("fmnist-cnn.json: model.layers[6].units: missing; expected a positive integer")});
        page.form()->setCurrentIndex(2);
        page.form()->layerEditor()->setCurrentRow(6);
        snapshot(page, QStringLiteral("experiment-layers"));
    }
};

QTEST_MAIN(ExperimentPageTest)
#include "experimentpage_test.moc"
