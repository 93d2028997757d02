// A store of an older schema in the real window, on the offscreen platform: it is shown with a
// banner and never written by being open; the first change (rename, delete, starting a run) asks
// to upgrade it — Cancel leaves the file byte for byte as it was, Upgrade migrates it and then
// makes the change.
#include <QApplication>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

#include "tests/profiler/olderstore.h"
#include "tests/ui/windowtestutil.h"
#include "ui/mainwindow.h"
#include "ui/pages/runspage.h"
#include "ui/store/storeservice.h"

using namespace trainbench;
using namespace trainbench::ui;

namespace {

const int kOlder = profiler::RunStore::latestSchemaVersion() - 2;

// Answers the modal dialogs that open, in order, from a timer: a modal exec() runs an event loop of
// its own, in which the timer fires. Each answer gets the dialog.
class DialogAnswers : public QObject {
public:
    using Answer = std::function<void(QWidget*)>;
    explicit DialogAnswers(std::vector<Answer> answers) : answers_(std::move(answers)) {
        connect(&timer_, &QTimer::timeout, this, [this] {
            QWidget* modal = QApplication::activeModalWidget();
            if (!modal || modal == last_ || next_ >= answers_.size()) return;
            last_ = modal;
            if (auto* box = qobject_cast<QMessageBox*>(modal)) asked += box->text() + "\n" + box->informativeText() + "\n";
            answers_[next_++](modal);
        });
        timer_.start(20);
    }
    bool done() const { return next_ == answers_.size(); }
    QString asked;  // the text of every message box answered

private:
    std::vector<Answer> answers_;
    size_t next_ = 0;
    QPointer<QWidget> last_;
    QTimer timer_;
};

DialogAnswers::Answer click(QMessageBox::StandardButton button) {
    return [button](QWidget* w) { qobject_cast<QMessageBox*>(w)->button(button)->click(); };
}

DialogAnswers::Answer enter(const QString& text) {
    return [text](QWidget* w) {
        auto* input = qobject_cast<QInputDialog*>(w);
        input->setTextValue(text);
        input->accept();
    };
}

// A store of an older schema with rows in every table (three runs), and how it was at the start.
struct OlderStore {
    QTemporaryDir dir;
    std::string db = dir.filePath(QStringLiteral("runs.db")).toStdString();
    profiler::testutil::StoreContent content;
    std::string bytes;
    OlderStore() {
        profiler::testutil::createStoreAtVersion(db, kOlder);
        {
            profiler::testutil::RawDb raw(db);
            profiler::testutil::fillEveryTable(raw, 3);
        }
        content = profiler::testutil::contentOf(db);
        bytes = profiler::testutil::fileBytes(db);
    }
};

// The window over db on its Runs page, once it shows the store's three runs; nullptr if it did not.
std::unique_ptr<MainWindow> windowOver(const std::string& db, MainWindow::OnClose onClose) {
    auto w = std::make_unique<MainWindow>(QString::fromStdString(db));
    w->setOnClose(onClose);
    w->show();
    w->showPage(MainWindow::Page::Runs);
    const bool shown = QTest::qWaitFor([&] { return w->store().runs() && w->store().runs()->runs.size() == 3; }, 10000);
    return shown ? std::move(w) : nullptr;
}

// Once the reader has handled every request sent before (they are queued in order), the file is
// still byte for byte as it was.
void expectUnchanged(StoreService& store, const OlderStore& s) {
    QSignalSpy answered(&store, &StoreService::timeToAccuracyRead);
    store.requestTimeToAccuracy(0.5);
    QVERIFY(answered.wait(5000));
    QVERIFY2(profiler::testutil::fileBytes(s.db) == s.bytes, "the store file changed");
}

// Upgraded to the latest schema, and every row of every table but runs (whose rows the change
// may touch) and schema_migrations is still there.
void expectUpgradedKeepingRows(const OlderStore& s) {
    profiler::testutil::RawDb raw(s.db);
    QCOMPARE(raw.integer("PRAGMA user_version"), int64_t(profiler::RunStore::latestSchemaVersion()));
    for (const auto& [table, content] : s.content) {
        if (table == "runs" || table == "schema_migrations") continue;
        const auto rows = profiler::testutil::rowsOf(raw, table, content.columns);
        QVERIFY2(std::includes(rows.begin(), rows.end(), content.rows.begin(), content.rows.end()), table.c_str());
    }
    QCOMPARE(raw.text("PRAGMA integrity_check"), std::string("ok"));
}

}  // namespace

class StoreUpgradeTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void anOlderStoreIsShownWithABannerAndNotWritten() {
        OlderStore s;
        {
            auto w = windowOver(s.db, MainWindow::OnClose::LeaveRunning);
            QVERIFY(w);
            QVERIFY(w->store().info().needsMigration);
            QVERIFY(w->storeBanner()->isVisible());
            QVERIFY(w->storeBanner()->text().contains(QStringLiteral("older trainbench")));
            QVERIFY(w->storeBanner()->text().contains(QStringLiteral("not changed")));
            // Every page that reads the store has read it.
            for (int page = 0; page < 5; ++page) w->showPage(static_cast<MainWindow::Page>(page));
            w->runsPage()->selectRuns({1});
            QVERIFY(w->runsPage()->renameAction()->isEnabled());  // a change is possible, after asking
            expectUnchanged(w->store(), s);
        }
        QVERIFY(profiler::testutil::fileBytes(s.db) == s.bytes);
    }

    void renamingAsksToUpgradeAndCancelLeavesTheFileAsItWas() {
        OlderStore s;
        auto w = windowOver(s.db, MainWindow::OnClose::LeaveRunning);
        QVERIFY(w);
        w->runsPage()->selectRuns({1});

        DialogAnswers cancel({enter(QStringLiteral("renamed")), click(QMessageBox::Cancel)});
        w->runsPage()->renameAction()->trigger();
        QVERIFY(cancel.done());
        QVERIFY(cancel.asked.contains(QStringLiteral("rename the run")));
        QVERIFY(cancel.asked.contains(QStringLiteral("schema %1 to schema").arg(kOlder)));
        expectUnchanged(w->store(), s);

        DialogAnswers upgrade({enter(QStringLiteral("renamed")), click(QMessageBox::Yes)});
        w->runsPage()->renameAction()->trigger();
        QVERIFY(upgrade.done());
        QTRY_VERIFY_WITH_TIMEOUT(!w->store().info().needsMigration && w->store().runs() &&
                                     w->store().runs()->runs.back().name == "renamed",
                                 10000);
        QVERIFY(!w->storeBanner()->isVisible());
        QCOMPARE(profiler::testutil::RawDb(s.db).text("SELECT name FROM runs WHERE id = 1"), std::string("renamed"));
        expectUpgradedKeepingRows(s);
    }

    void deletingAsksToUpgradeAfterTheDeleteIsConfirmed() {
        OlderStore s;
        auto w = windowOver(s.db, MainWindow::OnClose::LeaveRunning);
        QVERIFY(w);
        w->runsPage()->selectRuns({3});

        DialogAnswers cancel({click(QMessageBox::Yes), click(QMessageBox::Cancel)});
        w->runsPage()->deleteAction()->trigger();
        QVERIFY(cancel.done());
        QVERIFY(cancel.asked.contains(QStringLiteral("delete 1 run")));
        expectUnchanged(w->store(), s);

        DialogAnswers upgrade({click(QMessageBox::Yes), click(QMessageBox::Yes)});
        w->runsPage()->deleteAction()->trigger();
        QVERIFY(upgrade.done());
        QTRY_VERIFY_WITH_TIMEOUT(w->store().runs() && w->store().runs()->runs.size() == 2, 10000);
        QCOMPARE(profiler::testutil::RawDb(s.db).integer("SELECT count(*) FROM runs WHERE id = 3"), int64_t(0));
        QCOMPARE(profiler::testutil::RawDb(s.db).integer("PRAGMA user_version"),
                 int64_t(profiler::RunStore::latestSchemaVersion()));
    }

    void startingARunAsksToUpgradeAndCancelStartsNothing() {
        OlderStore s;
        auto w = windowOver(s.db, MainWindow::OnClose::StopRuns);
        QVERIFY(w);
        QSignalSpy launched(&w->launcher(), &RunLauncher::launched);
        const QString experiment = testutil::writeExperiment(s.dir, QStringLiteral("gui-upgraded"), 10, 0);

        DialogAnswers cancel({click(QMessageBox::Cancel)});
        w->launch(experiment);
        QVERIFY(cancel.done());
        QVERIFY(cancel.asked.contains(QStringLiteral("start a run in it")));
        QCOMPARE(launched.count(), 0);
        QVERIFY(w->launcher().running().empty());
        expectUnchanged(w->store(), s);

        DialogAnswers upgrade({click(QMessageBox::Yes)});
        w->launch(experiment);
        QVERIFY(upgrade.done());
        QCOMPARE(launched.count(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(testutil::runNamed(*w, "gui-upgraded") &&
                                     testutil::runNamed(*w, "gui-upgraded")->status == profiler::RunStatus::Completed,
                                 60000);
        expectUpgradedKeepingRows(s);
    }
};

QTEST_MAIN(StoreUpgradeTest)
#include "storeupgrade_test.moc"
