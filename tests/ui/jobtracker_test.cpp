// The GUI's job tracker with real worker threads: a newer request supersedes an older one, a
// cancelled job's result never arrives, results arrive on the GUI thread, start() never waits for a
// job. A job blocks on a semaphore the test releases, so every ordering is forced, not slept for.
#include "ui/jobs/jobtracker.h"

#include <QtTest/QtTest>

#include <QSemaphore>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

using namespace trainbench::ui;

namespace {

constexpr int kDeadlineMs = 30'000;  // generous: the machine is shared

// A job that says it has started, then waits (with a deadline) for the test to let it finish.
struct Gate {
    QSemaphore started;
    QSemaphore release;
    auto job(int value) {
        return [this, value] {
            started.release();
            release.tryAcquire(1, kDeadlineMs);
            return value;
        };
    }
    bool waitStarted() { return started.tryAcquire(1, kDeadlineMs); }
};

}  // namespace

class JobTrackerTest : public QObject {
    Q_OBJECT
private slots:
    void newerJobSupersedesOlder() {
        Gate gate;
        std::vector<int> got;
        JobTracker jobs;
        const JobId older = jobs.startLatest(gate.job(1), [&](int v) { got.push_back(v); });
        QVERIFY(gate.waitStarted());  // the older one is running...
        const JobId newer = jobs.startLatest(gate.job(2), [&](int v) { got.push_back(v); });
        QVERIFY(!jobs.isPending(older));  // ...and already unwanted
        QVERIFY(jobs.isPending(newer));
        gate.release.release(2);
        // One worker thread: the older job's delivery, had it been posted, is queued before the newer's.
        QTRY_VERIFY_WITH_TIMEOUT(!got.empty(), kDeadlineMs);
        QCoreApplication::sendPostedEvents();
        QCOMPARE(got, std::vector<int>{2});
        QVERIFY(jobs.idle());
    }

    void cancelledJobIsNeverDelivered() {
        Gate gate;
        std::vector<int> got;
        JobTracker jobs;
        const JobId running = jobs.start(gate.job(1), [&](int v) { got.push_back(v); });
        QVERIFY(gate.waitStarted());
        std::atomic<bool> queuedRan{false};
        const JobId queued = jobs.start([&] { queuedRan = true; return 2; }, [&](int v) { got.push_back(v); });
        jobs.cancel(running);
        jobs.cancel(queued);
        gate.release.release();
        // A later job is the sentinel: once it is delivered, anything before it would have been.
        jobs.start([] { return 3; }, [&](int v) { got.push_back(v); });
        QTRY_VERIFY_WITH_TIMEOUT(!got.empty(), kDeadlineMs);
        QCoreApplication::sendPostedEvents();
        QCOMPARE(got, std::vector<int>{3});
        QVERIFY(!queuedRan);  // cancelled before it started: never ran
    }

    void cancelAfterTheJobFinishedStillWins() {
        // The job is done and its delivery is queued, but the GUI thread has not run it yet.
        std::vector<int> got;
        JobTracker jobs;
        QSemaphore done;
        const JobId id = jobs.start([&] { return 1; }, [&](int v) { got.push_back(v); });
        jobs.start([&] { done.release(); return 0; }, [](int) {});
        QVERIFY(done.tryAcquire(1, kDeadlineMs));  // the first job's delivery was posted before this
        jobs.cancel(id);
        QTRY_VERIFY_WITH_TIMEOUT(jobs.idle(), kDeadlineMs);
        QCoreApplication::sendPostedEvents();
        QVERIFY(got.empty());
    }

    void deliversOnTheGuiThreadAndNeverBlocksIt() {
        Gate gate;
        JobTracker jobs(2);
        QThread* worker = nullptr;
        std::vector<QThread*> deliveredOn;
        auto job = [&] {
            worker = QThread::currentThread();
            gate.started.release();
            gate.release.tryAcquire(1, kDeadlineMs);
            return 1;
        };
        jobs.start(job, [&](int) { deliveredOn.push_back(QThread::currentThread()); });
        // start() returned while the job waits: the GUI thread goes on.
        QVERIFY(gate.waitStarted());
        QVERIFY(deliveredOn.empty());
        gate.release.release();
        QTRY_COMPARE_WITH_TIMEOUT(deliveredOn.size(), size_t{1}, kDeadlineMs);
        QCOMPARE(deliveredOn.front(), QCoreApplication::instance()->thread());
        QVERIFY(worker != QCoreApplication::instance()->thread());
    }

    void jobsThatDoNotSupersedeAllArrive() {
        // Two jobs on a two-thread tracker, running at the same time: both results arrive.
        Gate gate;
        std::vector<int> got;
        JobTracker jobs(2);
        jobs.start(gate.job(1), [&](int v) { got.push_back(v); });
        jobs.start(gate.job(2), [&](int v) { got.push_back(v); });
        QVERIFY(gate.waitStarted());
        QVERIFY(gate.waitStarted());  // both run at once
        gate.release.release(2);
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), size_t{2}, kDeadlineMs);
        std::sort(got.begin(), got.end());
        QCOMPARE(got, (std::vector<int>{1, 2}));
    }

    void nothingArrivesAfterTheTrackerIsGone() {
        Gate gate;
        std::vector<int> got;
        {
            JobTracker jobs;
            jobs.start(gate.job(1), [&](int v) { got.push_back(v); });
            // Queued behind it; whether it starts depends on whether the worker takes it before
            // the tracker's end cancels it. Either way its result must not arrive.
            jobs.start([] { return 2; }, [&](int v) { got.push_back(v); });
            QVERIFY(gate.waitStarted());
            gate.release.release();
        }  // cancels, waits for the running job
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        QVERIFY(got.empty());
    }
};

QTEST_MAIN(JobTrackerTest)
#include "jobtracker_test.moc"
