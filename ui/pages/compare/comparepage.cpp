#include "ui/pages/compare/comparepage.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QSet>
#include <QTimer>
#include <QVBoxLayout>

#include <map>
#include <set>

#include "profiler/grouping/configkeys.h"
#include "ui/charts/bandseries.h"
#include "ui/charts/datascalingchart.h"
#include "ui/charts/scalingchart.h"
#include "ui/charts/timeserieschart.h"
#include "ui/models/loadtestcurves.h"
#include "ui/models/comparesummarymodel.h"
#include "ui/models/configdiffmodel.h"
#include "ui/store/storeservice.h"

namespace trainbench::ui {

namespace {

QString runLabel(const profiler::RunRow& r) {
    return QStringLiteral("%1 (%2)").arg(QString::fromStdString(r.name)).arg(r.id.value);
}

QTableView* tableFor(QAbstractItemModel* model) {
    auto* v = new QTableView;
    v->setModel(model);
    v->verticalHeader()->hide();
    v->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    v->horizontalHeader()->setStretchLastSection(true);
    v->setAlternatingRowColors(true);
    v->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->setWordWrap(false);
    return v;
}

}  // namespace

ComparePage::ComparePage(StoreService& store, QWidget* parent) : QWidget(parent), store_(store) {
    title_ = new QLabel(tr("Select two or more runs on the Runs page and choose Compare (Ctrl+M)"));
    title_->setWordWrap(true);
    metricBox_ = new QComboBox;
    metricBox_->addItems({tr("test accuracy"), tr("test loss"), tr("training loss")});
    metricBox_->setToolTip(tr("What the convergence overlay shows"));
    xBox_ = new QComboBox;
    xBox_->addItems({tr("against step"), tr("against wall time"), tr("against cost")});
    xBox_->setToolTip(tr("x axis: optimizer step, training wall time (evaluations excluded), or cost"));
    // Cost needs a price per device-hour: selectable once every compared run records one.
    setCostSelectable(false);
    seedsBox_ = new QCheckBox(tr("Group seeds"));
    seedsBox_->setChecked(groupSeeds_);
    seedsBox_->setToolTip(tr("Runs that differ only by seed as one curve: their mean, with a band from min to max"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(title_, 1);
    controls->addWidget(metricBox_);
    controls->addWidget(xBox_);
    controls->addWidget(seedsBox_);

    convergence_ = new TimeSeriesChart;
    convergence_->setTitle(tr("Convergence"));
    scaling_ = new ScalingChart;
    scaling_->setTitle(tr("Scaling"));
    scalingMode_ = new QComboBox;
    scalingMode_->addItems({tr("throughput"), tr("time to target")});
    scalingMode_->setToolTip(tr("Throughput against replicas with the ideal linear line, or time to the target "
                                "accuracy against replicas"));
    auto* scalingBox = new QWidget;
    auto* sl = new QVBoxLayout(scalingBox);
    sl->setContentsMargins(0, 0, 0, 0);
    sl->addWidget(scalingMode_, 0, Qt::AlignRight);
    sl->addWidget(scaling_, 1);
    // Data scaling: error against the examples trained on, for data.fraction sweeps.
    dataScaling_ = new DataScalingChart;
    dataScaling_->setTitle(tr("Data scaling"));
    dataMetricBox_ = new QComboBox;
    dataMetricBox_->addItems({tr("test error"), tr("test loss")});
    dataMetricBox_->setToolTip(tr("Test error (1 − best test accuracy) or the final test loss, against the examples "
                                  "each run trained on (data.fraction of the training set)"));
    fitLabel_ = new QLabel;
    fitLabel_->setWordWrap(true);
    fitLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    fitLabel_->setToolTip(tr("Power law fitted by least squares on log–log axes to every run of the curve"));
    auto* dataBox = new QWidget;
    auto* dl = new QVBoxLayout(dataBox);
    dl->setContentsMargins(0, 0, 0, 0);
    dl->addWidget(dataMetricBox_, 0, Qt::AlignRight);
    dl->addWidget(dataScaling_, 1);
    dl->addWidget(fitLabel_);
    scalingTabs_ = new QTabWidget;
    scalingTabs_->addTab(scalingBox, tr("Devices"));
    scalingTabs_->addTab(dataBox, tr("Data"));
    scalingTabs_->setTabToolTip(1, tr("Error against training-set size: for runs that differ in data.fraction"));
    scalingTabs_->setTabEnabled(1, false);
    latency_ = new TimeSeriesChart;
    latency_->setTitle(tr("Latency against throughput (load tests)"));
    latency_->setAxisTitles(tr("achieved QPS"), tr("p99 latency (ms)"));
    scalingTabs_->addTab(latency_, tr("Latency"));
    scalingTabs_->setTabToolTip(2, tr("Load tests (runs of kind serve): p99 latency against achieved QPS, one curve per run"));

    config_ = new ConfigDiffModel(this);
    summary_ = new CompareSummaryModel(this);
    configView_ = tableFor(config_);
    summaryView_ = tableFor(summary_);
    differencesOnly_ = new QCheckBox(tr("Differences only"));
    differencesOnly_->setChecked(config_->differencesOnly());
    differencesOnly_->setToolTip(tr("Show only the keys whose values differ between the runs"));
    auto* configBox = new QWidget;
    auto* cl = new QVBoxLayout(configBox);
    cl->setContentsMargins(0, 0, 0, 0);
    cl->addWidget(differencesOnly_);
    cl->addWidget(configView_, 1);
    auto* tabs = new QTabWidget;
    tabs->addTab(summaryView_, tr("Breakdown and verdicts"));
    tabs->addTab(configBox, tr("Config diff"));

    auto* top = new QSplitter(Qt::Horizontal);
    top->addWidget(convergence_);
    top->addWidget(scalingTabs_);
    top->setStretchFactor(0, 3);
    top->setStretchFactor(1, 2);
    top->setSizes({720, 480});
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(top);
    split->addWidget(tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({480, 320});
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(split, 1);

    connect(&store_, &StoreService::runUpdated, this, &ComparePage::onUpdate);
    connect(metricBox_, &QComboBox::currentIndexChanged, this, [this](int i) { setMetric(static_cast<Metric>(i)); });
    connect(xBox_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setXAxis(i == 0 ? XAxis::Step : i == 1 ? XAxis::WallTime : XAxis::Cost); });
    connect(seedsBox_, &QCheckBox::toggled, this, &ComparePage::setGroupSeeds);
    connect(differencesOnly_, &QCheckBox::toggled, config_, &ConfigDiffModel::setDifferencesOnly);
    connect(dataMetricBox_, &QComboBox::currentIndexChanged, this, [this](int i) {
        setDataScalingMetric(i == 0 ? profiler::DataScalingMetric::TestError : profiler::DataScalingMetric::TestLoss);
    });
    connect(scalingMode_, &QComboBox::currentIndexChanged, this, [this](int i) {
        scaling_->setMode(i == 0 ? ScalingChart::Mode::Throughput : ScalingChart::Mode::TimeToTarget);
    });
}

void ComparePage::compare(const QList<qint64>& ids) {
    ids_ = ids;
    // The store sends whole runs only for ids this page did not follow yet; the histories of runs
    // still compared are kept, or a selection that overlaps the last one would lose its overlap.
    std::erase_if(runs_, [&](const auto& run) { return !ids.contains(run.first); });
    dataDiffered_ = false;
    convergence_->clear();
    store_.follow(this, ids);
    title_->setText(ids.isEmpty() ? tr("Select two or more runs on the Runs page and choose Compare (Ctrl+M)")
                                  : tr("Comparing %n run(s)", nullptr, static_cast<int>(ids.size())));
    rebuild();
}

void ComparePage::setMetric(Metric m) {
    metric_ = m;
    if (metricBox_->currentIndex() != static_cast<int>(m)) metricBox_->setCurrentIndex(static_cast<int>(m));
    rebuildConvergence();
}

void ComparePage::setXAxis(XAxis x) {
    x_ = x;
    const int i = x == XAxis::Step ? 0 : x == XAxis::WallTime ? 1 : 2;
    if (xBox_->currentIndex() != i) xBox_->setCurrentIndex(i);
    convergence_->resetZoom();
    rebuildConvergence();
}

bool ComparePage::dataScalingAvailable() const { return scalingTabs_->isTabEnabled(1); }

bool ComparePage::dataScalingShown() const { return scalingTabs_->currentIndex() == 1; }

void ComparePage::setDataScalingMetric(profiler::DataScalingMetric metric) {
    dataMetric_ = metric;
    const int i = metric == profiler::DataScalingMetric::TestError ? 0 : 1;
    if (dataMetricBox_->currentIndex() != i) dataMetricBox_->setCurrentIndex(i);
    rebuildDataScaling();
}

void ComparePage::rebuildDataScaling() {
    std::vector<profiler::DataScalingRun> runs;
    for (qint64 id : ids_) {
        auto it = runs_.find(id);
        if (it == runs_.end() || it->second.row().name.empty()) continue;
        runs.push_back(profiler::dataScalingRun(it->second.row(), it->second.evals()));
    }
    const profiler::DataScaling d = profiler::dataScalingOf(runs, dataMetric_);
    dataScaling_->setScaling(d);
    fitLabel_->setText(dataScaling_->fitTexts().join(QLatin1Char('\n')));
    scalingTabs_->setTabEnabled(1, d.differs);
    // A comparison across dataset sizes shows its data scaling first (once: the user's choice stays).
    if (d.differs && !dataDiffered_ && !d.curves.empty()) scalingTabs_->setCurrentIndex(1);
    if (!d.differs && scalingTabs_->currentIndex() == 1) scalingTabs_->setCurrentIndex(0);
    dataDiffered_ = d.differs && !d.curves.empty();
}

void ComparePage::setCostSelectable(bool on) {
    xBox_->setItemData(2, on ? QVariant() : QVariant(0), Qt::UserRole - 1);
    xBox_->setItemData(2, on ? tr("Cost: each run's devices at their price per hour over its training time")
                             : tr("A compared run records no price for its devices, so there is no cost to plot"),
                       Qt::ToolTipRole);
}

void ComparePage::setGroupSeeds(bool on) {
    groupSeeds_ = on;
    if (seedsBox_->isChecked() != on) seedsBox_->setChecked(on);
    rebuildConvergence();
}

void ComparePage::onUpdate(const RunUpdatePtr& update) {
    if (!update || !ids_.contains(update->row.id.value)) return;
    runs_[update->row.id.value].apply(*update);
    // Several runs update at once: rebuild once, after this batch of updates.
    if (pending_) return;
    pending_ = true;
    QTimer::singleShot(0, this, [this] {
        pending_ = false;
        rebuild();
    });
}

void ComparePage::rebuild() {
    QStringList titles;
    std::vector<std::string> configs;
    std::vector<CompareSummaryModel::RunFigures> figures;
    std::vector<ScalingPoint> points;
    std::map<std::string, QString> families;  // family key -> curve label ("mlp · mirrored")
    QSet<QString> labels;
    for (qint64 id : ids_) {
        auto it = runs_.find(id);
        if (it == runs_.end() || it->second.row().name.empty()) continue;
        const profiler::RunRow& r = it->second.row();
        titles << runLabel(r);
        configs.push_back(r.config_json);
        figures.push_back({r, it->second.steps()});
        if (r.throughput && *r.throughput > 0) {
            ScalingPoint p;
            p.devices = static_cast<int>(r.replicas.value_or(1));
            p.throughput = *r.throughput;
            p.timeToTargetSeconds = r.time_to_target;
            // A scaling curve: runs that differ only in replicas (and name, seed), so that different
            // models or strategies are never averaged into one point.
            const std::string family = profiler::scalingFamilyKey(r);
            if (!families.count(family)) {
                const QString base = QStringLiteral("%1 · %2").arg(QString::fromStdString(r.model.value_or(r.name)),
                                                                    QString::fromStdString(r.strategy));
                QString label = base;
                for (int n = 2; labels.contains(label); ++n) label = QStringLiteral("%1 (%2)").arg(base).arg(n);
                labels.insert(label);
                families[family] = label;
            }
            p.series = families[family];
            p.label = runLabel(r);
            points.push_back(p);
        }
    }
    config_->setConfigs(titles, configs);
    summary_->setRuns(std::move(figures));
    // A curve needs two replica counts: an experiment compared at one count scales nothing.
    std::map<QString, std::set<int>> counts;
    for (const ScalingPoint& p : points) counts[p.series].insert(p.devices);
    std::erase_if(points, [&](const ScalingPoint& p) { return counts[p.series].size() < 2; });
    scaling_->setPoints(points);
    scaling_->setDeviceNoun(tr("replicas"));
    rebuildDataScaling();
    rebuildLatency();
    rebuildConvergence();
}

void ComparePage::rebuildLatency() {
    std::vector<Series> curves;
    bool onlyServe = !ids_.isEmpty();
    for (qint64 id : ids_) {
        auto it = runs_.find(id);
        if (it == runs_.end() || it->second.row().name.empty()) continue;
        const RunHistory& h = it->second;
        if (h.row().kind != "serve") {
            onlyServe = false;
            continue;
        }
        curves.push_back(Series::make(QStringLiteral("#%1 ").arg(h.row().id.value) + loadtest::compactConfigurationLabel(h.attributes()),
                                      loadtest::latencyCurve(h.loadTestPoints(), loadtest::Percentile::P99)));
    }
    latency_->setSeries(curves);
    // The tab stays enabled (a chart styled while disabled keeps greyed legend labels); empty
    // when no load test is compared.
    // Load tests have no convergence or replica scaling: their curves are what to look at.
    if (onlyServe && !curves.empty()) scalingTabs_->setCurrentIndex(2);
    convergence_->setVisible(!(onlyServe && !curves.empty()));
}

void ComparePage::rebuildConvergence() {
    const bool accuracy = metric_ == Metric::TestAccuracy;
    // Every compared run needs a price for a cost axis; otherwise it falls back to wall time.
    bool priced = !ids_.isEmpty();
    for (qint64 id : ids_) {
        auto it = runs_.find(id);
        if (it == runs_.end() || !it->second.row().costPerSecond()) priced = false;
    }
    setCostSelectable(priced);
    if (x_ == XAxis::Cost && !priced) x_ = XAxis::WallTime;
    convergence_->setAxisTitles(x_ == XAxis::Step ? tr("step") : x_ == XAxis::WallTime ? tr("wall time (s)") : tr("cost (USD)"),
                                accuracy ? tr("test accuracy") : tr("loss"));
    convergence_->setLogY(metric_ == Metric::TrainingLoss);
    // Runs grouped by experiment-but-seed, in the order compared.
    std::vector<std::pair<std::string, std::vector<const RunHistory*>>> groups;
    for (qint64 id : ids_) {
        auto it = runs_.find(id);
        if (it == runs_.end() || it->second.row().name.empty()) continue;
        // Predictions and load tests do not converge: they have no curve here.
        if (it->second.row().kind != "train") continue;
        std::string key = groupSeeds_ ? profiler::seedGroupKey(it->second.row()) : std::string();
        if (key.empty()) key = "#" + std::to_string(id);
        auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
        if (g == groups.end()) groups.push_back({key, {&it->second}});
        else g->second.push_back(&it->second);
    }
    auto seriesOf = [&](const RunHistory& h) {
        std::vector<QPointF> p;
        switch (metric_) {
            case Metric::TestAccuracy: p = h.accuracyPoints(x_); break;
            case Metric::TestLoss: p = h.evalLossPoints(x_); break;
            case Metric::TrainingLoss: p = h.lossPoints(x_); break;
        }
        return Series::make(runLabel(h.row()), std::move(p));
    };
    std::vector<Series> lines;
    std::vector<BandSeries> bands;
    for (const auto& [key, members] : groups) {
        if (members.size() == 1) {
            lines.push_back(seriesOf(*members.front()));
            continue;
        }
        std::vector<Series> s;
        for (const RunHistory* h : members) s.push_back(seriesOf(*h));
        bands.push_back(aggregateBand(tr("%1 (%2 seeds)").arg(QString::fromStdString(members.front()->row().name))
                                          .arg(members.size()),
                                      s));
    }
    convergence_->setSeries(lines);
    for (const BandSeries& b : bands) convergence_->setBand(b);
}

}  // namespace trainbench::ui
