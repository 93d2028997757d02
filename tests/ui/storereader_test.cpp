// The GUI's store reader, on its own thread over a real SQLite file that a RunWriter fills: the
// run list arrives when it changes, a followed run arrives whole and then only what is new, and
// a run whose process died is shown as interrupted with its message. Opening, following and
// closing a store of an older schema writes nothing to it; a store not created yet shows empty.
#include <QFileInfo>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "profiler/store/runwriter.h"
#include "tests/profiler/olderstore.h"
#include "ui/store/storeservice.h"

using namespace trainbench;
using namespace trainbench::ui;

namespace {

engine::StepRecord stepRecord(int64_t step) {
    engine::StepRecord r;
    r.step = step;
    r.loss = 2.0 / static_cast<double>(step);
    r.step_seconds = 0.01;
    r.samples = 32;
    r.samples_per_second = 3200;
    r.wall_seconds = 0.01 * static_cast<double>(step);
    r.forward_seconds = 0.004;
    r.backward_seconds = 0.005;
    r.optimizer_seconds = 0.001;
    return r;
}

profiler::RunSpec spec(const std::string& name) {
    profiler::RunSpec s;
    s.name = name;
    s.config_json = "{\"name\": \"" + name + "\"}";
    return s;
}

const profiler::RunRow* findRun(const RunListPtr& list, int64_t id) {
    for (const auto& r : list->runs)
        if (r.id.value == id) return &r;
    return nullptr;
}

// What "the GUI does not change the store" means, for a WAL file: the database file's bytes and
// the -wal's bytes are the same before and after; a -wal that was not there may appear empty (a
// reader of a WAL file makes one), and the -shm (SQLite's shared-memory index, no data) may
// appear or change.
struct FileState {
    QByteArray db, wal;
    bool walExisted = false;
    static FileState of(const QString& path) {
        FileState s;
        QFile db(path), wal(path + QStringLiteral("-wal"));
        if (db.open(QIODevice::ReadOnly)) s.db = db.readAll();
        s.walExisted = wal.exists();
        if (wal.open(QIODevice::ReadOnly)) s.wal = wal.readAll();
        return s;
    }
};

// A store of an older schema with rows in every table.
void olderStore(const std::string& db) {
    profiler::testutil::createStoreAtVersion(db, profiler::RunStore::latestSchemaVersion() - 2);
    profiler::testutil::RawDb raw(db);
    profiler::testutil::fillEveryTable(raw, 3);
}

// Adds a run left 'running' by a process that is gone and one by a live process (returned through
// live); their ids through deadRun and liveRun.
void addDeadAndLiveRuns(const std::string& db, pid_t& live, int64_t& deadRun, int64_t& liveRun) {
    profiler::ProcessIdentity writer = profiler::ProcessIdentity::current();
    const pid_t gone = ::fork();
    if (gone == 0) ::_exit(0);
    ::waitpid(gone, nullptr, 0);
    writer.pid = gone;
    deadRun = profiler::testutil::insertRunningRow(db, writer, 3);
    live = ::fork();
    if (live == 0) {
        ::pause();
        ::_exit(0);
    }
    writer.pid = live;
    writer.proc_start = profiler::ProcessIdentity::startTimeOf(live);
    liveRun = profiler::testutil::insertRunningRow(db, writer, 2);
}

// Opens an older store with a dead run and a live one, follows every run, lets the live one die,
// closes: the GUI shows both right and writes nothing. holdWal: the two runs are committed by a
// connection that stays open (and closes last), so they stay in the -wal as a live run's commits
// do until a checkpoint; else the file was closed cleanly and has no -wal.
void openFollowAndCloseChangesNothing(bool holdWal) {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    olderStore(db.toStdString());
    std::optional<profiler::testutil::RawDb> holder;
    if (holdWal) {
        // Once it has read, it keeps a lock on the file that stops the others' checkpoint on close.
        holder.emplace(db.toStdString()).exec("PRAGMA wal_autocheckpoint = 0");
        holder->integer("SELECT count(*) FROM runs");
    }
    pid_t live = 0;
    int64_t deadRun = 0, liveRun = 0;
    addDeadAndLiveRuns(db.toStdString(), live, deadRun, liveRun);
    // The live writer does not outlive a failed check.
    const auto reap = qScopeGuard([&] {
        if (live > 0 && ::kill(live, SIGKILL) == 0) ::waitpid(live, nullptr, 0);
    });
    QCOMPARE(QFileInfo(db + "-wal").size() > 0, holdWal);
    const auto content = profiler::testutil::contentOf(db.toStdString());
    const FileState before = FileState::of(db);
    {
        StoreService service;
        QSignalSpy opened(&service, &StoreService::opened);
        QSignalSpy lists(&service, &StoreService::runsChanged);
        QSignalSpy updates(&service, &StoreService::runUpdated);
        service.open(db);
        QVERIFY(opened.wait(5000));
        const auto info = opened.first().at(0).value<StoreInfo>();
        QCOMPARE(info.schemaVersion, profiler::RunStore::latestSchemaVersion() - 2);
        QVERIFY(info.needsMigration);
        QVERIFY(!info.readOnly);
        QTRY_VERIFY_WITH_TIMEOUT(!lists.isEmpty(), 5000);
        auto list = lists.last().at(0).value<RunListPtr>();
        QVERIFY(findRun(list, deadRun) && findRun(list, liveRun));
        QCOMPARE(findRun(list, deadRun)->status, profiler::RunStatus::Interrupted);
        QCOMPARE(findRun(list, liveRun)->status, profiler::RunStatus::Running);
        QList<qint64> ids;
        for (const auto& r : list->runs) ids.append(r.id.value);
        service.follow(&service, ids);
        QTRY_VERIFY_WITH_TIMEOUT(updates.count() >= ids.size(), 5000);
        ::kill(live, SIGKILL);
        ::waitpid(live, nullptr, 0);
        live = 0;
        QTRY_VERIFY_WITH_TIMEOUT(
            findRun(lists.last().at(0).value<RunListPtr>(), liveRun)->status == profiler::RunStatus::Interrupted, 10000);
    }
    const FileState after = FileState::of(db);
    QVERIFY2(after.db == before.db, "the database file changed");
    if (before.walExisted) QVERIFY2(after.wal == before.wal, "the -wal changed");
    else QVERIFY2(after.wal.isEmpty(), "a -wal with content appeared");
    QVERIFY(profiler::testutil::contentOf(db.toStdString()) == content);
}

}  // namespace

class StoreReaderTest : public QObject {
    Q_OBJECT
private slots:
    void followsARunAsItIsWritten() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("runs.db").toStdString();
        profiler::RunWriter writer(db, spec("live"), profiler::RunWriterOptions{std::chrono::milliseconds(20), 4096});
        for (int s = 1; s <= 10; ++s) writer.step(stepRecord(s));
        writer.flush();

        StoreService service;
        QSignalSpy opened(&service, &StoreService::opened);
        QSignalSpy lists(&service, &StoreService::runsChanged);
        QSignalSpy updates(&service, &StoreService::runUpdated);
        service.open(QString::fromStdString(db));
        QVERIFY(opened.wait(5000));
        const auto info = opened.first().at(0).value<StoreInfo>();
        QCOMPARE(info.schemaVersion, profiler::RunStore::latestSchemaVersion());
        QVERIFY(!info.readOnly);
        QTRY_VERIFY_WITH_TIMEOUT(!lists.isEmpty(), 5000);
        auto list = lists.last().at(0).value<RunListPtr>();
        QCOMPARE(list->runs.size(), size_t(1));
        QCOMPARE(list->runs[0].status, profiler::RunStatus::Running);

        service.follow(&service, {writer.runId().value});
        QTRY_VERIFY_WITH_TIMEOUT(!updates.isEmpty(), 5000);
        auto first = updates.last().at(0).value<RunUpdatePtr>();
        QVERIFY(first->reset);
        QCOMPARE(first->newSteps.size(), size_t(10));

        for (int s = 11; s <= 15; ++s) writer.step(stepRecord(s));
        writer.flush();
        QTRY_VERIFY_WITH_TIMEOUT(updates.count() >= 2, 5000);
        auto second = updates.last().at(0).value<RunUpdatePtr>();
        QVERIFY(!second->reset);
        QCOMPARE(second->newSteps.size(), size_t(5));
        QCOMPARE(second->newSteps.front().step, 11);

        engine::RunSummary summary;
        summary.steps = 15;
        writer.finish(profiler::RunStatus::Completed, summary);
        QTRY_VERIFY_WITH_TIMEOUT(updates.last().at(0).value<RunUpdatePtr>()->row.status ==
                                     profiler::RunStatus::Completed, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(lists.last().at(0).value<RunListPtr>()->runs[0].status ==
                                     profiler::RunStatus::Completed, 5000);
    }

    void aRunWhoseProcessDiedIsShownInterruptedWithItsMessage() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("runs.db").toStdString();
        const pid_t child = ::fork();
        if (child == 0) {
            profiler::RunWriter writer(db, spec("doomed"));
            writer.step(stepRecord(1));
            writer.flush();
            ::raise(SIGKILL);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        QVERIFY(WIFSIGNALED(status));

        StoreService service;
        QSignalSpy lists(&service, &StoreService::runsChanged);
        service.open(QString::fromStdString(db));
        QTRY_VERIFY_WITH_TIMEOUT(!lists.isEmpty(), 5000);
        const auto list = lists.last().at(0).value<RunListPtr>();
        QCOMPARE(list->runs.size(), size_t(1));
        QCOMPARE(list->runs[0].status, profiler::RunStatus::Interrupted);
        QVERIFY(list->runs[0].message && list->runs[0].message->find("killed or crashed") != std::string::npos);
    }

    void renameAndDeleteRunOffTheGuiThread() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("runs.db").toStdString();
        for (const char* name : {"one", "two"}) {
            profiler::RunWriter w(db, spec(name));
            w.finish(profiler::RunStatus::Completed, engine::RunSummary{});
        }
        StoreService service;
        QSignalSpy lists(&service, &StoreService::runsChanged);
        service.open(QString::fromStdString(db));
        QTRY_VERIFY_WITH_TIMEOUT(!lists.isEmpty(), 5000);
        service.renameRun(1, QStringLiteral("first"));
        QTRY_VERIFY_WITH_TIMEOUT(lists.last().at(0).value<RunListPtr>()->runs.back().name == "first", 5000);
        service.deleteRuns({2});
        QTRY_VERIFY_WITH_TIMEOUT(lists.last().at(0).value<RunListPtr>()->runs.size() == 1, 5000);
    }

    void openingAnOlderStoreWritesNothing() { openFollowAndCloseChangesNothing(false); }

    void followingAStoreWithCommitsInItsWalWritesNothing() { openFollowAndCloseChangesNothing(true); }

    void aStoreThatDoesNotExistYetIsShownEmptyAndNotCreated() {
        QTemporaryDir dir;
        const QString db = dir.filePath("runs.db");
        StoreService service;
        QSignalSpy opened(&service, &StoreService::opened);
        QSignalSpy lists(&service, &StoreService::runsChanged);
        service.open(db);
        QVERIFY(opened.wait(5000));
        QVERIFY(!opened.last().at(0).value<StoreInfo>().exists);
        QTRY_VERIFY_WITH_TIMEOUT(!lists.isEmpty(), 5000);
        QVERIFY(lists.last().at(0).value<RunListPtr>()->runs.empty());
        QVERIFY(!QFile::exists(db));
        // The first run creates it; the reader opens it then.
        profiler::RunWriter writer(db.toStdString(), spec("first"));
        writer.flush();
        QTRY_VERIFY_WITH_TIMEOUT(lists.last().at(0).value<RunListPtr>()->runs.size() == 1, 10000);
        QVERIFY(opened.last().at(0).value<StoreInfo>().exists);
    }

    void aStoreThatCannotBeOpenedIsReported() {
        QTemporaryDir dir;
        QFile junk(dir.filePath("junk.db"));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write(QByteArray(4096, 'x'));
        junk.close();
        StoreService service;
        QSignalSpy failed(&service, &StoreService::failed);
        service.open(junk.fileName());
        QVERIFY(failed.wait(5000));
        QVERIFY(failed.first().at(0).toString().contains("junk.db"));
    }
};

QTEST_MAIN(StoreReaderTest)
#include "storereader_test.moc"
