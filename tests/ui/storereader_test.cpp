// The GUI's store reader, on its own thread over a real SQLite file that a RunWriter fills: the
// run list arrives when it changes, a followed run arrives whole and then only what is new, and
// a run whose process died is shown as interrupted with its message.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/wait.h>
#include <unistd.h>

#include "profiler/store/runwriter.h"
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
