#include "ui/screenshots.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTabWidget>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "profiler/compare/datascaling.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/datascalingchart.h"
#include "ui/charts/timeserieschart.h"
#include "ui/mainwindow.h"
#include "ui/models/comparesummarymodel.h"
#include "ui/pages/compare/comparepage.h"
#include "ui/pages/dashboard/dashboardpage.h"
#include "ui/pages/experiment/experimentpage.h"
#include "ui/models/plantablemodel.h"
#include "ui/pages/plan/layoutsview.h"
#include "ui/pages/plan/planpage.h"
#include "ui/pages/inference/inferencepage.h"
#include "ui/pages/runspage.h"
#include "ui/store/storeservice.h"

namespace trainbench::ui {

namespace {

bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() > timeoutMs) return false;
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(10);
    }
    return true;
}

// Lets throttled chart redraws and layouts settle.
void settle() {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 300) QApplication::processEvents(QEventLoop::AllEvents, 50);
}

bool save(QWidget* w, const QString& path) {
    settle();
    QString error;
    if (!chartexport::savePng(w, path, &error)) {
        std::fprintf(stderr, "cannot write %s: %s\n", qPrintable(path), qPrintable(error));
        return false;
    }
    std::printf("%s\n", qPrintable(path));
    return true;
}

}  // namespace

bool renderScreenshots(MainWindow& window, const QString& dir) {
    if (!QDir().mkpath(dir)) {
        std::fprintf(stderr, "cannot create %s\n", qPrintable(dir));
        return false;
    }
    window.resize(1440, 900);
    window.show();
    StoreService& store = window.store();
    if (!waitUntil([&] { return store.runs() != nullptr; }, 15000)) {
        std::fprintf(stderr, "the run store did not open: %s\n", qPrintable(store.info().path));
        return false;
    }
    const auto runs = store.runs();
    if (runs->runs.empty()) {
        std::fprintf(stderr, "%s has no runs to show\n", qPrintable(store.info().path));
        return false;
    }
    // The dashboard shows the finished run with a verdict that trained longest.
    const profiler::RunRow* best = nullptr;
    for (const auto& r : runs->runs)
        if (r.verdict && r.steps && (!best || *r.steps > *best->steps)) best = &r;
    if (!best) best = &runs->runs.front();
    // Compare: up to six finished runs of the most common strategy, newest first.
    QList<qint64> compared;
    for (const auto& r : runs->runs)
        if (r.status == profiler::RunStatus::Completed && r.kind == "train" && compared.size() < 6) compared.append(r.id.value);

    bool ok = true;
    window.showPage(MainWindow::Page::Runs);
    window.runsPage()->selectRuns(compared);
    ok = save(&window, dir + QStringLiteral("/runs.png")) && ok;

    window.dashboardPage()->showRun(best->id.value);
    window.showPage(MainWindow::Page::Dashboard);
    const int64_t expected = best->steps.value_or(0);
    waitUntil([&] { return static_cast<int64_t>(window.dashboardPage()->history().steps().size()) >= expected &&
                           !window.dashboardPage()->history().row().name.empty(); },
              15000);
    ok = save(&window, dir + QStringLiteral("/dashboard.png")) && ok;

    window.comparePage()->compare(compared);
    window.showPage(MainWindow::Page::Compare);
    waitUntil([&] { return window.comparePage()->summaryModel()->columnCount() == static_cast<int>(compared.size()) + 1; }, 15000);
    ok = save(&window, dir + QStringLiteral("/compare.png")) && ok;

    // A data-scaling sweep, when the store holds one: the newest family of finished runs that differ
    // in the number of examples they trained on (data.fraction), up to 18 runs, on Compare's Data tab.
    QList<qint64> family;
    {
        std::map<std::string, std::set<int64_t>> sizes;  // family -> the examples its finished runs trained on
        std::vector<std::pair<qint64, std::string>> finished;  // newest first
        for (const auto& r : runs->runs) {
            if (r.status != profiler::RunStatus::Completed || !r.train_examples) continue;
            finished.emplace_back(r.id.value, profiler::dataScalingRun(r, {}).family);
            sizes[finished.back().second].insert(*r.train_examples);
        }
        const auto newest = std::find_if(finished.begin(), finished.end(),
                                         [&](const auto& f) { return sizes[f.second].size() > 1; });
        for (const auto& [id, key] : finished)
            if (newest != finished.end() && key == newest->second && family.size() < 18) family.append(id);
    }
    if (!family.isEmpty()) {
        window.comparePage()->compare(family);
        // Every run read (each is one run of a point of the chart), and the Data tab shown.
        waitUntil([&] {
            qsizetype shown = 0;
            for (const auto& c : window.comparePage()->dataScalingChart()->scaling().curves)
                for (const auto& p : c.points) shown += static_cast<qsizetype>(p.runs.size());
            return window.comparePage()->dataScalingShown() && shown == family.size();
        }, 15000);
        ok = save(&window, dir + QStringLiteral("/compare-data.png")) && ok;
    }
    // Plan: the store's configurations against the newest run's target (the page's default), with
    // a deadline a little over the fastest time and a budget a little over the cheapest cost.
    window.showPage(MainWindow::Page::Plan);
    PlanPage* plan = window.planPage();
    plan->refresh();
    waitUntil([&] { return !plan->busy(); }, 15000);
    std::optional<double> fastest, cheapest;
    for (const profiler::PlanRow& r : plan->tableModel()->plan().rows) {
        if (r.candidate.seconds) fastest = std::min(fastest.value_or(*r.candidate.seconds), *r.candidate.seconds);
        if (r.candidate.seconds && r.candidate.cost) cheapest = std::min(cheapest.value_or(*r.candidate.cost), *r.candidate.cost);
    }
    if (fastest) plan->setDeadline(QString::number(*fastest * 1.5, 'g', 2) + QStringLiteral("s"));
    if (cheapest) plan->setBudget(QString::number(*cheapest * 1.5, 'f', 6));
    ok = save(&window, dir + QStringLiteral("/plan.png")) && ok;
    // Plan, Layouts tab: GPT-3 175B on 1,024 A100 80 GB (the shipped description), when the sources
    // are at hand.
    LayoutsView* layouts = plan->layoutsView();
    if (QFileInfo::exists(QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments/models/gpt3-175b.json"))) {
        plan->showLayouts(true);
        layouts->setModelFile(QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments/models/gpt3-175b.json"));
        layouts->setDevice(QStringLiteral("a100-sxm4-80gb"));
        layouts->setDeviceCount(1024);
        layouts->plan();
        waitUntil([&] { return !layouts->busy(); }, 15000);
        ok = save(&window, dir + QStringLiteral("/plan-layouts.png")) && ok;
        plan->showLayouts(false);
    }

    // Inference: every load test of the store, once the page has each one whole; then the newest
    // load test's and the newest prediction's dashboards, when the store holds them.
    int serveRuns = 0;
    const profiler::RunRow *newestServe = nullptr, *newestPredict = nullptr;
    for (const auto& r : runs->runs) {
        if (r.kind == "serve" && !newestServe) newestServe = &r;
        if (r.kind == "predict" && !newestPredict) newestPredict = &r;
        serveRuns += r.kind == "serve" ? 1 : 0;
    }
    window.showPage(MainWindow::Page::Inference);
    waitUntil([&] { return window.inferencePage()->runsReceived() >= serveRuns; }, 15000);
    ok = save(&window, dir + QStringLiteral("/inference.png")) && ok;
    // Compare: up to six finished load tests, on the Latency tab.
    QList<qint64> loadTests;
    for (const auto& r : runs->runs)
        if (r.kind == "serve" && r.status == profiler::RunStatus::Completed && loadTests.size() < 6) loadTests.append(r.id.value);
    if (loadTests.size() >= 2) {
        window.comparePage()->compare(loadTests);
        window.showPage(MainWindow::Page::Compare);
        waitUntil([&] { return window.comparePage()->latencyChart()->seriesNames().size() == loadTests.size(); }, 15000);
        ok = save(&window, dir + QStringLiteral("/compare-serve.png")) && ok;
    }
    for (const profiler::RunRow* r : {newestServe, newestPredict}) {
        if (!r) continue;
        window.dashboardPage()->showRun(r->id.value);
        window.showPage(MainWindow::Page::Dashboard);
        waitUntil([&] { return window.dashboardPage()->history().row().id.value == r->id.value; }, 15000);
        ok = save(&window, dir + (r == newestServe ? QStringLiteral("/dashboard-serve.png") : QStringLiteral("/dashboard-predict.png"))) && ok;
    }

    const nlohmann::json config = nlohmann::json::parse(best->config_json, nullptr, false);
    window.experimentPage()->setJson(QString::fromStdString(config.is_discarded() ? best->config_json : config.dump(2)));
    window.showPage(MainWindow::Page::Experiment);
    ok = save(&window, dir + QStringLiteral("/experiment.png")) && ok;
    // The form's Model tab: a preset, a layer list or an ONNX file of the user's.
    if (auto* tabs = window.experimentPage()->findChild<QTabWidget*>()) {
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->tabText(i) == QStringLiteral("Model")) tabs->setCurrentIndex(i);
        ok = save(&window, dir + QStringLiteral("/experiment-model.png")) && ok;
    }
    return ok;
}

}  // namespace trainbench::ui
