#include "ui/pages/dashboard/dashboardpage.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QSysInfo>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include <nlohmann/json.hpp>

#include "app/experiment/actionexperiment.h"
#include "ui/charts/breakdownchart.h"
#include "ui/charts/memorybar.h"
#include "ui/charts/rankbars.h"
#include "ui/charts/timeserieschart.h"
#include "ui/launch/runlauncher.h"
#include "ui/models/format.h"
#include "ui/pages/dashboard/verdictcard.h"
#include "ui/pages/inference/serveview.h"
#include "ui/store/storeservice.h"

namespace trainbench::ui {

namespace {

const QString kLoss = QStringLiteral("training loss");
const QString kTestLoss = QStringLiteral("test loss");
const QString kAccuracy = QStringLiteral("test accuracy");
const QString kThroughput = QStringLiteral("samples/s");

QString xTitle(XAxis x) { return x == XAxis::Step ? QStringLiteral("step") : QStringLiteral("wall time (s)"); }

}  // namespace

DashboardPage::DashboardPage(StoreService& store, QWidget* parent) : QWidget(parent), store_(store) {
    title_ = new QLabel(tr("No run selected: open one from the Runs page, or run an experiment"));
    QFont f = title_->font();
    f.setPointSizeF(f.pointSizeF() * 1.25);
    f.setBold(true);
    title_->setFont(f);
    status_ = new QLabel;
    progress_ = new QProgressBar;
    progress_->setRange(0, 1000);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(220);
    progress_->setToolTip(tr("Steps trained of the planned steps (epochs × steps per epoch, or train.max_steps)"));
    eta_ = new QLabel;
    eta_->setToolTip(tr("Time left at the pace of the last 50 steps, evaluations and checkpoints included"));
    stop_ = new QPushButton(tr("Stop"));
    stop_->setToolTip(tr("Ask the run to stop after its current step; it is recorded as 'stopped' (Ctrl+.)"));
    stop_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    xAxis_ = new QComboBox;
    xAxis_->addItem(tr("against step"));
    xAxis_->addItem(tr("against wall time"));
    xAxis_->setToolTip(tr("The x axis of loss, accuracy and throughput: optimizer step, or training wall time "
                          "(evaluations excluded)"));

    auto* header = new QHBoxLayout;
    header->addWidget(title_);
    header->addWidget(status_);
    header->addStretch(1);
    header->addWidget(progress_);
    header->addWidget(eta_);
    header->addWidget(xAxis_);
    header->addWidget(stop_);

    loss_ = new TimeSeriesChart;
    loss_->setTitle(tr("Loss"));
    accuracy_ = new TimeSeriesChart;
    accuracy_->setTitle(tr("Test accuracy"));
    throughput_ = new TimeSeriesChart;
    throughput_->setTitle(tr("Throughput"));
    breakdown_ = new BreakdownChart;
    breakdown_->setTitle(tr("Step time"));
    memory_ = new MemoryBar;
    memory_->setTitle(tr("Memory"));
    memory_->setMinimumHeight(160);
    ranks_ = new RankBars;
    ranks_->setMinimumHeight(160);
    ranks_->setVisible(false);
    ranks_->setToolTip(tr("Each rank's mean step over the last 500 steps: computing, sending, and idle (a "
                          "pipeline's bubble, or waiting for a slower rank)"));
    verdict_ = new VerdictCard;
    setXAxis(XAxis::Step);

    auto* charts = new QWidget;
    trainCharts_ = charts;
    auto* grid = new QGridLayout(charts);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(loss_, 0, 0);
    grid->addWidget(accuracy_, 0, 1);
    grid->addWidget(throughput_, 1, 0);
    grid->addWidget(breakdown_, 1, 1);
    auto* scroll = new QScrollArea;
    scroll->setWidget(verdict_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* side = new QSplitter(Qt::Vertical);
    side->addWidget(scroll);
    side->addWidget(memory_);
    side->addWidget(ranks_);
    side->setStretchFactor(0, 3);
    side->setStretchFactor(1, 1);
    side->setStretchFactor(2, 1);
    serve_ = new ServeView;
    body_ = new QStackedWidget;
    body_->addWidget(charts);
    body_->addWidget(serve_);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(body_);
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    side->setMinimumWidth(400);
    split->setSizes({1000, 420});
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(split, 1);

    connect(&store_, &StoreService::runUpdated, this, &DashboardPage::onUpdate);
    connect(xAxis_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setXAxis(i == 0 ? XAxis::Step : XAxis::WallTime); });
    connect(verdict_, &VerdictCard::tryAction, this, &DashboardPage::onTryAction);
    connect(stop_, &QPushButton::clicked, this, &DashboardPage::stopRun);
    // Zooming one chart over steps zooms the others to the same steps.
    for (TimeSeriesChart* c : {loss_, accuracy_, throughput_})
        connect(c, &ChartView::xRangeChanged, this, [this, c](double lo, double hi) {
            // The others echo the change back, with rounding: an echo of the range just spread is
            // not a new zoom (else they would chase each other for ever).
            // A reset spreads as a reset, so that the others follow a live run's new steps again.
            const bool reset = !c->isZoomed();
            const double eps = 1e-9 * std::max(1.0, std::abs(hi - lo));
            if (!reset && std::abs(lo - linkedRange_.first) <= eps && std::abs(hi - linkedRange_.second) <= eps) return;
            linkedRange_ = reset ? qMakePair(0.0, 0.0) : qMakePair(lo, hi);
            // Each chart repaints for a new axis range (Qt Charts does it at once): one event per
            // chart, so the event loop is never held for all of them together.
            for (ChartView* other : std::initializer_list<ChartView*>{loss_, accuracy_, throughput_, breakdown_})
                if (other != c && (other != breakdown_ || x_ == XAxis::Step))
                    QTimer::singleShot(0, other, [other, lo, hi, reset] {
                        if (reset) other->resetZoom();
                        else other->setXRange(lo, hi);
                    });
        });
    refreshHeader();
}

void DashboardPage::showRun(qint64 id) {
    if (id == runId_) return;
    runId_ = id;
    history_ = RunHistory{};
    shownVerdict_.clear();
    for (TimeSeriesChart* c : {loss_, accuracy_, throughput_}) c->clear();
    breakdown_->setData(std::make_shared<const BreakdownData>());
    memory_->setFootprint({});
    ranks_->setRanks({});
    ranks_->setVisible(false);
    verdict_->setVerdict(std::nullopt);
    serve_->clear();
    kind_.clear();
    store_.follow(this, id > 0 ? QList<qint64>{id} : QList<qint64>{});
    refreshHeader();
}

void DashboardPage::setXAxis(XAxis x) {
    x_ = x;
    for (TimeSeriesChart* c : {loss_, accuracy_, throughput_}) c->resetZoom();
    loss_->setAxisTitles(xTitle(x), tr("loss"));
    accuracy_->setAxisTitles(xTitle(x), tr("accuracy"));
    throughput_->setAxisTitles(xTitle(x), tr("samples/s"));
    if (xAxis_->currentIndex() != (x == XAxis::Step ? 0 : 1)) xAxis_->setCurrentIndex(x == XAxis::Step ? 0 : 1);
    refreshCharts(0, true);
}

void DashboardPage::onUpdate(const RunUpdatePtr& update) {
    if (!update || update->row.id.value != runId_) return;
    const size_t first = history_.apply(*update);
    if (update->row.kind != kind_) arrangeForKind();
    if (update->row.kind == "serve") serve_->setRun(*update);
    refreshCharts(first, update->reset);
    refreshHeader();
}

void DashboardPage::refreshCharts(size_t firstNew, bool whole) {
    const auto& steps = history_.steps();
    if (whole) {
        loss_->setSeries(Series::make(kLoss, history_.lossPoints(x_)));
        throughput_->setSeries(Series::make(kThroughput, history_.throughputPoints(x_)));
    } else if (firstNew < steps.size()) {
        const auto loss = history_.lossPoints(x_, firstNew);
        const auto rate = history_.throughputPoints(x_, firstNew);
        loss_->appendPoints(kLoss, loss);
        throughput_->appendPoints(kThroughput, rate);
    }
    // Evaluations are few: whole every time.
    const auto testLoss = history_.evalLossPoints(x_);
    if (!testLoss.empty()) loss_->setSeries(Series::make(kTestLoss, testLoss));
    accuracy_->setSeries(Series::make(kAccuracy, history_.accuracyPoints(x_)));
    // The breakdown is rebuilt whole; for long runs not at every update (at most 1/s per 100k steps).
    const qint64 minAgeMs = 1000 * static_cast<qint64>(1 + steps.size() / 100000);
    const bool finished = history_.row().status != profiler::RunStatus::Running;
    if (whole || finished || !breakdownAge_.isValid() || breakdownAge_.elapsed() >= minAgeMs) {
        breakdown_->setData(history_.breakdown());
        breakdownAge_.start();
        std::vector<RankParts> ranks = history_.rankParts();
        ranks_->setVisible(!ranks.empty() && kind_ != "serve");
        ranks_->setTitle(tr("Per %1 (last 500 steps)").arg(history_.rankNoun()));
        if (ranks != ranks_->ranks()) ranks_->setRanks(std::move(ranks));
    }
    const QString verdictKey = QString::fromStdString(std::string(profiler::runStatusName(history_.row().status))) +
                               QString::fromStdString(history_.row().verdict.value_or("")) +
                               QString::number(history_.loadTestPoints().size());
    if (verdictKey != shownVerdict_ && !history_.row().name.empty()) {
        shownVerdict_ = verdictKey;
        QString why;
        if (history_.row().status == profiler::RunStatus::Running) why = tr("The verdict is classified when the run ends.");
        else if (kind_ == "serve") why = tr("This load test measured no point: there is nothing to classify.");
        else if (!history_.verdict()) why = tr("This run has no verdict: it recorded no steps, or ended before it could "
                                               "be classified.");
        if (kind_ == "serve" && history_.servingVerdict())
            verdict_->setServingVerdict(*history_.servingVerdict());
        else
            verdict_->setVerdict(history_.verdict(), why);
        memory_->setFootprint(history_.memory());
    }
}

bool DashboardPage::showsServeView() const { return body_->currentWidget() == serve_; }

void DashboardPage::arrangeForKind() {
    const profiler::RunRow& r = history_.row();
    kind_ = r.kind;
    const bool predict = kind_ == "predict", serve = kind_ == "serve";
    body_->setCurrentWidget(serve ? static_cast<QWidget*>(serve_) : trainCharts_);
    // A prediction has no loss, accuracy or optimizer memory: those charts would be flat zeros.
    loss_->setVisible(!predict);
    accuracy_->setVisible(!predict);
    memory_->setVisible(!predict && !serve);
    xAxis_->setVisible(!serve);
    throughput_->setTitle(predict ? tr("Examples per second") : tr("Throughput"));
    throughput_->setAxisTitles(xTitle(x_), predict ? tr("examples/s") : tr("samples/s"));
    breakdown_->setTitle(predict ? tr("Batch time (input, compute, output)") : tr("Step time"));
    // The GUI opens training experiments; a prediction's action is a new `predict`, which
    // `trainbench-cli apply` builds (app/cli/applyprediction), so the card shows that command.
    verdict_->setCommandHint(predict || serve ? QStringLiteral("trainbench-cli apply %1 --action ").arg(r.id.value) +
                                                    QStringLiteral("%1 --run --db ") + store_.info().path
                                              : QString());
}

void DashboardPage::refreshHeader() {
    if (runId_ <= 0 || history_.row().name.empty()) {
        stop_->setEnabled(false);
        progress_->setVisible(false);
        eta_->clear();
        status_->clear();
        return;
    }
    const profiler::RunRow& r = history_.row();
    title_->setText(tr("%1  (run %2)").arg(QString::fromStdString(r.name)).arg(r.id.value));
    const QString status = QString::fromStdString(std::string(profiler::runStatusName(r.status)));
    const bool bad = r.status == profiler::RunStatus::Failed || r.status == profiler::RunStatus::Interrupted;
    status_->setText(bad && r.message ? QStringLiteral("<span style='color:#d03030'>%1: %2</span>")
                                            .arg(status, QString::fromStdString(*r.message).toHtmlEscaped())
                                      : status);
    status_->setToolTip(r.message ? QString::fromStdString(*r.message) : QString());
    status_->setWordWrap(true);
    const Progress p = history_.progress();
    progress_->setVisible(p.total > 0);
    progress_->setValue(static_cast<int>(p.fraction * 1000));
    QString text = p.total > 0 ? tr("step %1 of %2").arg(format::integer(p.step), format::integer(p.total))
                               : tr("step %1").arg(format::integer(p.step));
    if (p.etaSeconds) text += tr(" · ETA %1").arg(format::duration(*p.etaSeconds));
    if (r.kind == "serve") text.clear();  // a load test has points, not steps (the serve view counts them)
    if (r.kind == "predict") {
        // What a prediction is measured by: examples/s, time, cost (and top-1 when it had labels).
        QStringList parts;
        if (r.throughput) parts << tr("%1 examples/s").arg(format::integer(static_cast<int64_t>(std::llround(*r.throughput))));
        if (r.train_seconds) parts << format::duration(r.train_seconds);
        if (r.cost) parts << QStringLiteral("$%1").arg(*r.cost, 0, 'f', *r.cost < 1 ? 4 : 2);
        if (r.final_accuracy) parts << tr("top-1 %1").arg(format::percent(r.final_accuracy));
        if (!parts.isEmpty()) text = parts.join(QStringLiteral(" · "));
    }
    eta_->setText(text);
    stop_->setEnabled(r.status == profiler::RunStatus::Running && r.host == QSysInfo::machineHostName().toStdString());
}

void DashboardPage::onTryAction(int number) {
    const auto& v = history_.verdict();
    if (!v || number < 1 || number > static_cast<int>(v->actions.size())) return;
    try {
        const nlohmann::json x = app::experimentForAction(history_.row(), v->actions[static_cast<size_t>(number - 1)], number);
        emit tryExperiment(QString::fromStdString(x.dump(2)));
    } catch (const std::exception& e) {
        emit failed(tr("Cannot apply action %1: %2").arg(number).arg(QString::fromUtf8(e.what())));
    }
}

void DashboardPage::stopRun() {
    const profiler::RunRow& r = history_.row();
    if (r.status != profiler::RunStatus::Running) return;
    if (!RunLauncher::stop(r.pid))
        emit failed(tr("Could not signal process %1 of run %2: it may have ended").arg(r.pid).arg(r.id.value));
    else
        status_->setText(tr("stopping after the current step…"));
}

}  // namespace trainbench::ui
