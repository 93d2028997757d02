#include "bench/ui/latencybench.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "ui/charts/timeserieschart.h"
#include "ui/mainwindow.h"
#include "ui/pages/dashboard/dashboardpage.h"

namespace trainbench::bench {

namespace {

struct Latency {
    double p50 = 0, p99 = 0, max = 0;
    size_t ticks = 0;
    size_t steps = 0;  // steps the dashboard received meanwhile
};

// Runs the event loop for `seconds`, ticking every 5 ms; lateness = gap between ticks - 5 ms.
Latency measure(ui::MainWindow& w, int seconds, bool interact) {
    std::vector<double> late;
    QElapsedTimer clock;
    clock.start();
    qint64 last = clock.nsecsElapsed();
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        late.push_back(std::max(0.0, static_cast<double>(now - last) / 1e6 - 5.0));
        last = now;
    });
    std::mt19937 rng(11);
    QTimer zoom;
    QObject::connect(&zoom, &QTimer::timeout, [&] {
        ui::TimeSeriesChart* c = w.dashboardPage()->lossChart();
        const auto& steps = w.dashboardPage()->history().steps();
        if (steps.size() < 10) return;
        const double n = static_cast<double>(steps.back().step);
        std::uniform_real_distribution<double> at(0.0, n * 0.8);
        const double lo = at(rng);
        c->setXRange(lo, lo + n * 0.2);
    });
    const size_t before = w.dashboardPage()->history().steps().size();
    tick.start(5);
    if (interact) zoom.start(250);
    QEventLoop loop;
    QTimer::singleShot(seconds * 1000, &loop, &QEventLoop::quit);
    loop.exec();
    tick.stop();
    zoom.stop();
    Latency r;
    r.ticks = late.size();
    r.steps = w.dashboardPage()->history().steps().size() - before;
    std::sort(late.begin(), late.end());
    if (late.empty()) return r;
    r.p50 = late[late.size() / 2];
    r.p99 = late[static_cast<size_t>(0.99 * static_cast<double>(late.size() - 1))];
    r.max = late.back();
    return r;
}

void print(const char* label, const Latency& l) {
    std::printf("%-34s p50 %6.2f ms   p99 %6.2f ms   max %7.2f ms   (%zu ticks, %zu steps arrived)\n", label, l.p50,
                l.p99, l.max, l.ticks, l.steps);
}

}  // namespace

int runLatencyBench(const LatencyOptions& o) {
    QStandardPaths::setTestModeEnabled(true);  // the user's settings and logs stay untouched
    QTemporaryDir tmp;
    const QString db = tmp.filePath(QStringLiteral("runs.db"));
    ui::MainWindow w(db);
    w.setOnClose(ui::MainWindow::OnClose::StopRuns);
    w.resize(1440, 900);
    w.show();

    std::printf("GUI event-loop latency (goal: p99 < 50 ms during a live run), %d s each, 1440x900 offscreen:\n", o.seconds);
    print("comparator: idle window", measure(w, o.seconds, false));

    w.launcher().launch(QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments/fmnist-mlp.json"), db,
                        {QStringLiteral("train.threads=%1").arg(o.runThreads), QStringLiteral("train.epochs=50"),
                         QStringLiteral("name=latency-bench")});
    QElapsedTimer wait;
    wait.start();
    while (w.dashboardPage()->history().steps().size() < 100 && wait.elapsed() < 60000)
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    if (w.dashboardPage()->history().steps().empty()) {
        std::fprintf(stderr, "the run did not start (see the log under %s)\n",
                     qPrintable(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation)));
        return 1;
    }
    print(o.interact ? "live W1 run, zooming every 250 ms" : "live W1 run", measure(w, o.seconds, o.interact));
    w.close();
    return 0;
}

}  // namespace trainbench::bench
