#include "ui/pages/inference/inferencepage.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "profiler/store/runattributes.h"
#include "ui/charts/timeserieschart.h"
#include "ui/models/loadtestcurves.h"
#include "ui/pages/dashboard/verdictcard.h"
#include "ui/store/storeservice.h"

namespace trainbench::ui {

namespace {

enum Column { Precision, Config, Size, Accuracy, Runs, BestQps, P50, P99, CostPerMillion, ColumnCount };

QTableWidgetItem* numberItem(std::optional<double> v, int decimals, const QString& prefix = {}) {
    auto* item = new QTableWidgetItem(v ? prefix + QString::number(*v, 'f', decimals) : QString());
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    if (v) item->setData(Qt::UserRole, *v);
    return item;
}

}  // namespace

InferencePage::InferencePage(StoreService& store, QWidget* parent) : QWidget(parent), store_(store) {
    model_ = new QComboBox;
    model_->setToolTip(tr("The load tests of one served model (serve.source_run or serve.model), or of all"));
    model_->addItem(tr("all models"));
    percentile_ = new QComboBox;
    percentile_->addItems({tr("p99 latency"), tr("p90 latency"), tr("p50 latency")});
    percentile_->setToolTip(tr("The latency percentile the curves show, measured from each query's scheduled arrival"));
    bound_ = new QDoubleSpinBox;
    bound_->setRange(0, 100000);
    bound_->setDecimals(1);
    bound_->setSuffix(tr(" ms"));
    bound_->setPrefix(tr("p99 ≤ "));
    bound_->setSpecialValueText(tr("no latency bound"));
    bound_->setToolTip(tr("The best point of a configuration is its highest QPS whose p99 latency meets this bound "
                          "(as LoadGen's Server scenario); starts at the bound the load tests recorded"));
    auto* header = new QHBoxLayout;
    auto* title = new QLabel(tr("Inference: load tests by server configuration"));
    QFont f = title->font();
    f.setPointSizeF(f.pointSizeF() * 1.25);
    f.setBold(true);
    title->setFont(f);
    header->addWidget(title);
    header->addStretch(1);
    header->addWidget(new QLabel(tr("Model:")));
    header->addWidget(model_);
    header->addWidget(percentile_);
    header->addWidget(bound_);

    empty_ = new QLabel(tr("No load tests in this store yet: run <code>trainbench-cli loadtest MODEL</code>; "
                           "each load test appears here as it measures its points."));
    empty_->setWordWrap(true);
    chart_ = new TimeSeriesChart;
    chart_->setTitle(tr("Latency against throughput, one curve per configuration"));
    chart_->setAxisTitles(tr("achieved QPS"), tr("p99 latency (ms)"));
    table_ = new QTableWidget(0, ColumnCount);
    table_->setHorizontalHeaderLabels({tr("Precision"), tr("Configuration"), tr("Size (MB)"), tr("Top-1 (%)"), tr("Runs"),
                                       tr("Best QPS"), tr("p50 (ms)"), tr("p99 (ms)"), tr("$ / million")});
    const QString tips[ColumnCount] = {
        tr("serve.precision: the numbers the model computes in (fp32, int8)"),
        tr("The server's settings under TF Serving's names: max_batch_size, batch_timeout_micros, model instances"),
        tr("The model's weights as served (serve.weight_bytes); a load test measures it when MODEL is a run"),
        tr("Top-1 accuracy of the model as served on its run's full test set (serve.test_accuracy); the tooltip of a "
           "cell gives fp32's next to it and the calibration"),
        tr("Load tests of this configuration"),
        tr("The highest achieved queries per second of any point without errors whose p99 meets the bound"),
        tr("Median latency at the best point"),
        tr("99th-percentile latency at the best point"),
        tr("Dollars per million predictions at the best point, from the run's price per hour; empty when no price is recorded")};
    for (int c = 0; c < ColumnCount; ++c) table_->horizontalHeaderItem(c)->setToolTip(tips[c]);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    // The numbers take the width they need; the configuration, the longest text, the rest.
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(Config, QHeaderView::Stretch);
    verdict_ = new VerdictCard;
    auto* scroll = new QScrollArea;
    scroll->setWidget(verdict_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(360);

    auto* left = new QSplitter(Qt::Vertical);
    left->addWidget(chart_);
    left->addWidget(table_);
    left->setStretchFactor(0, 3);
    left->setStretchFactor(1, 1);
    left->setSizes({560, 220});
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(scroll);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(empty_);
    layout->addWidget(split, 1);

    connect(&store_, &StoreService::runsChanged, this, &InferencePage::onRuns);
    connect(&store_, &StoreService::runUpdated, this, &InferencePage::onUpdate);
    connect(model_, &QComboBox::currentIndexChanged, this, [this] { scheduleRebuild(); });
    connect(percentile_, &QComboBox::currentIndexChanged, this, [this] { scheduleRebuild(); });
    // The page sets the recorded bound with signals blocked: a change that arrives here is the user's.
    connect(bound_, &QDoubleSpinBox::valueChanged, this, [this] {
        boundTouched_ = true;
        scheduleRebuild();
    });
    connect(table_, &QTableWidget::currentCellChanged, this, [this](int row) { showVerdictOf(row); });
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row) {
        if (row >= 0 && row < static_cast<int>(configs_.size()) && !configs_[static_cast<size_t>(row)].runs.empty())
            emit openRun(configs_[static_cast<size_t>(row)].runs.front());
    });
    if (store_.runs()) onRuns(store_.runs());
    rebuild();
}

void InferencePage::onRuns(const RunListPtr& runs) {
    if (!runs) return;
    QList<qint64> ids;
    for (const auto& r : runs->runs)
        if (r.kind == "serve") ids.append(r.id.value);
    for (auto it = updates_.begin(); it != updates_.end();)
        it = ids.contains(it->first) ? std::next(it) : updates_.erase(it);
    store_.follow(this, ids);
    scheduleRebuild();
}

void InferencePage::onUpdate(const RunUpdatePtr& update) {
    if (!update || update->row.kind != "serve") return;
    updates_[update->row.id.value] = update;
    scheduleRebuild();
}

void InferencePage::scheduleRebuild() {
    // Updates of many runs arrive together: one rebuild after them.
    if (rebuildPending_) return;
    rebuildPending_ = true;
    QTimer::singleShot(0, this, [this] {
        rebuildPending_ = false;
        rebuild();
    });
}

void InferencePage::rebuild() {
    using namespace loadtest;
    // The model filter: every model the serve runs name, kept in order of first appearance.
    const QString chosen = model_->currentIndex() > 0 ? model_->currentText() : QString();
    QStringList models;
    for (auto it = updates_.rbegin(); it != updates_.rend(); ++it) {
        const QString m = modelLabel(it->second->attributes);
        if (!m.isEmpty() && !models.contains(m)) models << m;
    }
    {
        const QSignalBlocker block(model_);
        while (model_->count() > 1) model_->removeItem(1);
        model_->addItems(models);
        model_->setCurrentIndex(chosen.isEmpty() ? 0 : std::max(0, static_cast<int>(models.indexOf(chosen)) + 1));
    }
    const QString filter = model_->currentIndex() > 0 ? model_->currentText() : QString();
    const bool prefixModel = filter.isEmpty() && models.size() > 1;

    // Newest run first (higher ids are newer), merged by configuration.
    std::vector<Configuration> configs;
    for (auto it = updates_.rbegin(); it != updates_.rend(); ++it) {
        const RunUpdate& u = *it->second;
        const QString model = modelLabel(u.attributes);
        if (!filter.isEmpty() && model != filter) continue;
        QString label = configurationLabel(u.attributes), legend = compactConfigurationLabel(u.attributes);
        if (prefixModel && !model.isEmpty()) {
            label = model + QStringLiteral(": ") + label;
            legend = model + QStringLiteral(": ") + legend;
        }
        auto c = std::find_if(configs.begin(), configs.end(), [&](const Configuration& x) { return x.label == label; });
        if (c == configs.end()) {
            Configuration n;
            n.label = label;
            n.legend = legend;
            n.precision = QString::fromStdString(attribute(u.attributes, profiler::runattr::kServePrecision).value_or(""));
            n.newest = u.row;
            n.instancesPerQuery = instancesPerQuery(u.attributes);
            const auto number = [&](const char* key) -> std::optional<double> {
                const std::optional<std::string> v = attribute(u.attributes, key);
                if (!v) return std::nullopt;
                bool ok = false;
                const double d = QString::fromStdString(*v).toDouble(&ok);
                return ok ? std::optional<double>(d) : std::nullopt;
            };
            namespace ra = profiler::runattr;
            n.weightBytes = number(ra::kServeWeightBytes);
            n.fp32WeightBytes = number(ra::kServeFp32WeightBytes);
            n.accuracy = number(ra::kServeTestAccuracy);
            n.fp32Accuracy = number(ra::kServeFp32TestAccuracy);
            n.testExamples = number(ra::kServeTestExamples);
            n.calibration = QString::fromStdString(attribute(u.attributes, ra::kServeCalibration).value_or(""));
            configs.push_back(std::move(n));
            c = std::prev(configs.end());
        }
        c->runs.push_back(u.row.id.value);
        c->points.insert(c->points.end(), u.loadTestPoints.begin(), u.loadTestPoints.end());
    }
    // Precisions side by side: fp32 rows, then int8, each by label.
    std::stable_sort(configs.begin(), configs.end(), [](const Configuration& a, const Configuration& b) {
        return std::tie(a.precision, a.label) < std::tie(b.precision, b.label);
    });
    configs_ = std::move(configs);
    // The bound the newest load test recorded, until the user sets one.
    if (!boundTouched_ && !updates_.empty()) {
        const QSignalBlocker block(bound_);
        bound_->setValue(latencyBoundMs(updates_.rbegin()->second->attributes).value_or(0.0));
    }
    const std::optional<double> bound = bound_->value() > 0 ? std::optional<double>(bound_->value()) : std::nullopt;

    const int pc = percentile_->currentIndex();
    const Percentile p = pc == 0 ? Percentile::P99 : pc == 1 ? Percentile::P90 : Percentile::P50;
    chart_->setAxisTitles(tr("achieved QPS"), tr("%1 latency (ms)").arg(pc == 0 ? "p99" : pc == 1 ? "p90" : "p50"));
    std::vector<Series> series;
    for (const Configuration& c : configs_) series.push_back(Series::make(c.legend, latencyCurve(c.points, p)));
    chart_->setSeries(series);
    chart_->setReferenceLine(tr("p99 bound"), pc == 0 ? bound : std::nullopt);

    const int selected = table_->currentRow();
    table_->setSortingEnabled(false);
    table_->setRowCount(static_cast<int>(configs_.size()));
    for (int row = 0; row < static_cast<int>(configs_.size()); ++row) {
        const Configuration& c = configs_[static_cast<size_t>(row)];
        const profiler::LoadTestPoint* best = bestPoint(c.points, bound);
        table_->setItem(row, Precision, new QTableWidgetItem(c.precision.isEmpty() ? tr("not recorded") : c.precision));
        auto* config = new QTableWidgetItem(c.label);
        config->setToolTip(c.label);
        table_->setItem(row, Config, config);
        auto* size = numberItem(c.weightBytes ? std::optional<double>(*c.weightBytes / 1e6) : std::nullopt, 3);
        if (c.weightBytes && c.fp32WeightBytes && c.precision != QStringLiteral("fp32"))
            size->setToolTip(tr("%1 MB, %2x smaller than fp32's %3 MB")
                                 .arg(*c.weightBytes / 1e6, 0, 'f', 3)
                                 .arg(*c.fp32WeightBytes / std::max(1.0, *c.weightBytes), 0, 'f', 2)
                                 .arg(*c.fp32WeightBytes / 1e6, 0, 'f', 3));
        table_->setItem(row, Size, size);
        auto* accuracy = numberItem(c.accuracy ? std::optional<double>(*c.accuracy * 100.0) : std::nullopt, 2);
        if (c.accuracy) {
            QString tip = tr("%1 % on %2 test examples as served").arg(*c.accuracy * 100.0, 0, 'f', 2).arg(c.testExamples.value_or(0), 0, 'f', 0);
            if (c.fp32Accuracy && c.precision != QStringLiteral("fp32"))
                tip += tr("; fp32: %1 % (%2 points)")
                           .arg(*c.fp32Accuracy * 100.0, 0, 'f', 2)
                           .arg((*c.accuracy - *c.fp32Accuracy) * 100.0, 0, 'f', 2);
            if (!c.calibration.isEmpty()) tip += tr("; calibrated on %1").arg(c.calibration);
            accuracy->setToolTip(tip);
        }
        table_->setItem(row, Accuracy, accuracy);
        table_->setItem(row, Runs, numberItem(static_cast<double>(c.runs.size()), 0));
        table_->setItem(row, BestQps, numberItem(best ? std::optional<double>(best->achieved_qps) : std::nullopt, 1));
        table_->setItem(row, P50, numberItem(best ? best->p50_ms : std::nullopt, 2));
        table_->setItem(row, P99, numberItem(best ? best->p99_ms : std::nullopt, 2));
        table_->setItem(row, CostPerMillion,
                        numberItem(best ? costPerMillion(c.newest, best->achieved_qps, c.instancesPerQuery) : std::nullopt, 4,
                                   QStringLiteral("$")));
    }
    table_->resizeRowsToContents();  // a long configuration wraps instead of being cut off
    empty_->setVisible(configs_.empty());
    if (selected >= 0 && selected < table_->rowCount()) showVerdictOf(selected);
    else if (table_->rowCount() > 0) table_->selectRow(0);
    else verdict_->setVerdict(std::nullopt, tr("Select a configuration to see its newest load test's verdict."));
}

void InferencePage::showVerdictOf(int row) {
    if (row < 0 || row >= static_cast<int>(configs_.size())) return;
    const Configuration& c = configs_[static_cast<size_t>(row)];
    const auto it = updates_.find(c.runs.front());
    if (it == updates_.end()) return;
    const RunUpdate& u = *it->second;
    verdict_->setCommandHint(QStringLiteral("trainbench-cli apply %1 --action ").arg(u.row.id.value) +
                             QStringLiteral("%1 --run --db ") + store_.info().path);
    if (u.servingVerdict) {
        verdict_->setServingVerdict(*u.servingVerdict);
        return;
    }
    verdict_->setVerdict(std::nullopt, u.row.status == profiler::RunStatus::Running
                                           ? tr("The verdict is classified once a point is measured.")
                                           : tr("This load test (run %1) measured no point.").arg(u.row.id.value));
}

}  // namespace trainbench::ui
