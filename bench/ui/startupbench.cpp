#include "bench/ui/startupbench.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "app/experiment/experiment.h"
#include "profiler/store/runwriter.h"
#include "bench/benchutil.h"

namespace trainbench::bench {

namespace {

// A store like a user's after months: `runs` finished runs of W1 with different seeds and
// batches, each with its steps and evaluations.
void buildStore(const std::string& db, int runs, int steps) {
    const app::Experiment x = app::loadExperimentFile(std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json");
    for (int i = 0; i < runs; ++i) {
        nlohmann::json config = x.resolved;
        config["seed"] = i;
        config["train"]["batch_size"] = 64 << (i % 3);
        profiler::RunSpec spec;
        spec.name = "w1-" + std::to_string(i);
        spec.config_json = config.dump();
        spec.global_batch = config["train"]["batch_size"].get<int64_t>();
        spec.dataset = "fashion-mnist";
        spec.model = "mlp";
        profiler::RunWriter w(db, spec, profiler::RunWriterOptions{std::chrono::milliseconds(1000), 1 << 20});
        for (int s = 1; s <= steps; ++s) {
            engine::StepRecord r;
            r.step = s;
            r.loss = 2.3 / (1.0 + 0.01 * s);
            r.step_seconds = 0.004;
            r.samples = *spec.global_batch;
            r.samples_per_second = static_cast<double>(r.samples) / r.step_seconds;
            r.wall_seconds = 0.004 * s;
            r.forward_seconds = 0.0015;
            r.backward_seconds = 0.002;
            r.optimizer_seconds = 0.0005;
            w.step(r);
            if (s % 50 == 0) {
                engine::EvalRecord e;
                e.step = s;
                e.split = "test";
                e.loss = r.loss;
                e.accuracy = 0.8 + 0.0001 * s;
                e.samples = 10000;
                w.eval(e);
            }
        }
        engine::RunSummary summary;
        summary.steps = steps;
        summary.evaluations = steps / 50;
        summary.final_accuracy = summary.best_accuracy = 0.8 + 0.0001 * steps;
        summary.throughput = 16000;
        summary.train_seconds = 0.004 * steps;
        w.finish(profiler::RunStatus::Completed, summary);
    }
}

struct Sample {
    double wallMs = 0;     // from exec to the "ready" line, as the bench sees it
    double insideMs = 0;   // from main() to ready, as the program reports it
    int runs = 0;
};

bool startOnce(const QString& program, const QString& db, const QString& config, Sample& out) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), config);  // no remembered experiment or layout
    p.setProcessEnvironment(env);
    QElapsedTimer t;
    t.start();
    p.start(program, {QStringLiteral("--db"), db, QStringLiteral("--startup-probe")});
    while (p.waitForReadyRead(30000)) {
        const QString line = QString::fromUtf8(p.readLine()).trimmed();
        if (!line.startsWith(QStringLiteral("ready "))) continue;
        out.wallMs = static_cast<double>(t.nsecsElapsed()) / 1e6;
        const QStringList parts = line.split(QLatin1Char(' '));
        out.insideMs = parts.value(1).toDouble();
        out.runs = parts.value(3).toInt();
        p.waitForFinished(10000);
        return true;
    }
    std::fprintf(stderr, "%s did not report ready: %s\n", qPrintable(program), p.readAllStandardError().constData());
    return false;
}

bool measure(const char* label, const QString& program, const QString& db, int reps, const QString& config) {
    std::vector<double> wall, inside;
    int runs = 0;
    for (int i = 0; i < reps + 1; ++i) {
        Sample s;
        if (!startOnce(program, db, config, s)) return false;
        if (i == 0) continue;  // the first start warms the page cache
        wall.push_back(s.wallMs);
        inside.push_back(s.insideMs);
        runs = s.runs;
    }
    std::printf("%-26s %5d runs listed   wall median %7.0f ms  p95 %7.0f ms   (main() to ready: median %6.0f ms)\n",
                label, runs, percentile(wall, 0.5), percentile(wall, 0.95), percentile(inside, 0.5));
    return true;
}

}  // namespace

int runStartupBench(const StartupOptions& o) {
    QString program = QString::fromStdString(o.program);
#ifdef TRAINBENCH_GUI_PATH
    if (program.isEmpty()) program = QStringLiteral(TRAINBENCH_GUI_PATH);
#endif
    if (!QFileInfo(program).isExecutable()) {
        std::fprintf(stderr, "no trainbench program at '%s' (--program)\n", qPrintable(program));
        return 2;
    }
    QTemporaryDir tmp;
    QString db = QString::fromStdString(o.db);
    if (db.isEmpty()) {
        db = tmp.filePath(QStringLiteral("runs.db"));
        QElapsedTimer t;
        t.start();
        buildStore(db.toStdString(), o.runs, o.stepsPerRun);
        std::printf("built a store of %d runs x %d steps in %.1f s: %s\n", o.runs, o.stepsPerRun,
                    static_cast<double>(t.elapsed()) / 1000.0, qPrintable(db));
    }
    const QString empty = tmp.filePath(QStringLiteral("empty.db"));
    profiler::RunWriter(empty.toStdString(), profiler::RunSpec{}).finish(profiler::RunStatus::Completed, {});
    std::printf("start-up to an interactive window (goal: < 1500 ms with 1,000 runs), %d starts each:\n", o.repetitions);
    if (!measure("store of 1,000 runs", program, db, o.repetitions, tmp.path())) return 1;
    if (!measure("comparator: 1-run store", program, empty, o.repetitions, tmp.path())) return 1;
    return 0;
}

}  // namespace trainbench::bench
