#include "ui/pages/plan/planpage.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "app/plan/plancandidates.h"
#include "profiler/format/numberformat.h"
#include "profiler/plan/quantities.h"
#include "ui/charts/planchart.h"
#include "ui/models/plantablemodel.h"
#include "ui/pages/plan/layoutsview.h"
#include "ui/pages/plan/planprojector.h"
#include "ui/pages/plan/planwidgets.h"
#include "ui/store/storeservice.h"

namespace trainbench::ui {

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

QString pick(const profiler::Plan& plan, const std::optional<size_t>& i) {
    if (!i) return {};
    const auto& c = plan.rows[*i].candidate;
    return QStringLiteral("%1 (%2, %3)")
        .arg(str(c.label), str(profiler::formatDuration(*c.seconds)),
             c.cost ? str(profiler::formatMoney(*c.cost)) : QObject::tr("cost unknown"));
}

}  // namespace

PlanPage::PlanPage(StoreService& store, QWidget* parent) : QWidget(parent), store_(store) {
    target_ = new QDoubleSpinBox;
    target_->setRange(0.01, 100.0);
    target_->setDecimals(2);
    target_->setSuffix(QStringLiteral(" %"));
    target_->setValue(85.0);
    target_->setToolTip(tr("Test accuracy to reach: the first evaluation at or above it ends the time to target"));
    deadline_ = new QLineEdit;
    deadline_->setPlaceholderText(tr("e.g. 2h, 45m, 1h30m"));
    deadline_->setToolTip(tr("Time to reach the target by (empty: no deadline)"));
    budget_ = new QLineEdit;
    budget_->setPlaceholderText(tr("e.g. $5"));
    budget_->setToolTip(tr("Money to reach the target with, in USD (empty: no budget)"));
    order_ = new QComboBox;
    order_->addItems({tr("by time"), tr("by cost")});
    order_->setToolTip(tr("Rank by time or by cost to the target"));
    pretraining_ = new QCheckBox(tr("Warm starts with pre-training"));
    pretraining_->setToolTip(tr("Rank warm-started configurations with the training of their checkpoint added"));
    experiment_ = new QLineEdit;
    experiment_->setPlaceholderText(tr("a sweep experiment file: its points without runs are projected (optional)"));
    auto* browse = new QPushButton(tr("Browse…"));
    auto* refreshButton = new QPushButton(tr("Refresh"));
    refreshButton->setToolTip(tr("Read the runs again"));

    auto* limits = new QHBoxLayout;
    const std::pair<const char*, QWidget*> fields[] = {{"Target", target_}, {"Deadline", deadline_}, {"Budget", budget_}};
    for (const auto& [label, w] : fields) {
        limits->addWidget(new QLabel(tr(label)));
        limits->addWidget(w);
    }
    limits->addWidget(order_);
    limits->addWidget(pretraining_);
    limits->addStretch(1);
    limits->addWidget(refreshButton);
    auto* sweep = new QHBoxLayout;
    sweep->addWidget(new QLabel(tr("Sweep")));
    sweep->addWidget(experiment_, 1);
    sweep->addWidget(browse);

    problem_ = planwidgets::problemLabel();
    summary_ = planwidgets::summaryLabel();
    model_ = new PlanTableModel(this);
    table_ = planwidgets::rankedTable(model_);
    chart_ = new PlanChart;
    chart_->setMinimumHeight(260);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(table_);
    split->addWidget(chart_);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);

    auto* accuracy = new QWidget;
    auto* layout = new QVBoxLayout(accuracy);
    layout->addLayout(limits);
    layout->addLayout(sweep);
    layout->addWidget(problem_);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);
    // Two questions, one tab each: which configuration reaches the target in time and budget, and
    // how to split a model too big for one GPU.
    layouts_ = new LayoutsView;
    tabs_ = new QTabWidget;
    tabs_->setDocumentMode(true);
    tabs_->addTab(accuracy, tr("Time to accuracy"));
    tabs_->addTab(layouts_, tr("Model layouts"));
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(tabs_);

    projector_ = new PlanProjector(this);
    debounce_ = new QTimer(this);
    debounce_->setSingleShot(true);
    debounce_->setInterval(300);
    connect(debounce_, &QTimer::timeout, this, &PlanPage::requestRuns);
    connect(&store_, &StoreService::timeToAccuracyRead, this, &PlanPage::onRuns);
    connect(&store_, &StoreService::runsChanged, this, [this](const RunListPtr& list) {
        stale_ = true;
        // Until the user picks one, the target is the newest run's own.
        if (!targetTouched_ && list)
            for (const auto& r : list->runs)
                if (r.target_accuracy && *r.target_accuracy > 0) {
                    QSignalBlocker block(target_);
                    target_->setValue(*r.target_accuracy * 100.0);
                    break;
                }
        if (isVisible()) debounce_->start();
    });
    connect(target_, &QDoubleSpinBox::valueChanged, this, [this] {
        targetTouched_ = true;
        debounce_->start();
    });
    connect(deadline_, &QLineEdit::textChanged, this, &PlanPage::rebuild);
    connect(budget_, &QLineEdit::textChanged, this, &PlanPage::rebuild);
    connect(order_, &QComboBox::currentIndexChanged, this, &PlanPage::rebuild);
    connect(pretraining_, &QCheckBox::toggled, this, &PlanPage::rebuild);
    connect(experiment_, &QLineEdit::editingFinished, this, [this] { setExperimentFile(experiment_->text()); });
    connect(browse, &QPushButton::clicked, this, &PlanPage::chooseExperiment);
    connect(refreshButton, &QPushButton::clicked, this, &PlanPage::refresh);
    connect(projector_, &PlanProjector::estimated, this, &PlanPage::onProjection);
}

void PlanPage::setTarget(double fraction) { target_->setValue(fraction * 100.0); }

void PlanPage::showLayouts(bool on) { tabs_->setCurrentWidget(on ? static_cast<QWidget*>(layouts_) : tabs_->widget(0)); }
double PlanPage::target() const { return target_->value() / 100.0; }
void PlanPage::setDeadline(const QString& text) { deadline_->setText(text); }
void PlanPage::setBudget(const QString& text) { budget_->setText(text); }
void PlanPage::setOrder(profiler::PlanOrder order) { order_->setCurrentIndex(order == profiler::PlanOrder::Cost ? 1 : 0); }
void PlanPage::setWithPretraining(bool on) { pretraining_->setChecked(on); }

void PlanPage::setExperimentFile(const QString& path) {
    if (experiment_->text() != path) experiment_->setText(path);
    awaitingProjection_ = !path.isEmpty();
    projector_->request(path);
}

void PlanPage::chooseExperiment() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Sweep to project"), experiment_->text(),
                                                      tr("Experiment files (*.json);;All files (*)"));
    if (!path.isEmpty()) setExperimentFile(path);
}

void PlanPage::refresh() {
    debounce_->stop();
    requestRuns();
}

void PlanPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (stale_) debounce_->start(0);
}

void PlanPage::requestRuns() {
    stale_ = false;
    awaitingRuns_ = store_.requestTimeToAccuracy(target());
}

void PlanPage::onRuns(const TtaSnapshotPtr& snapshot) {
    if (!snapshot || snapshot->request != awaitingRuns_) return;  // an older request's answer
    awaitingRuns_ = 0;
    runs_ = snapshot;
    rebuild();
}

void PlanPage::onProjection(const ProjectionInput& input) {
    awaitingProjection_ = false;
    points_ = input.points;
    projectionError_ = input.error;
    rebuild();
}

QString PlanPage::summaryText() const { return summary_->text(); }
QString PlanPage::problemText() const { return problem_->text(); }

void PlanPage::rebuild() {
    QStringList problems;
    profiler::PlanLimits limits;
    try {
        if (!deadline_->text().trimmed().isEmpty())
            limits.deadline_seconds = profiler::parseDuration(deadline_->text().trimmed().toStdString(), "deadline");
    } catch (const std::invalid_argument& e) {
        problems << tr("%1 (no deadline applied)").arg(str(e.what()));
    }
    try {
        if (!budget_->text().trimmed().isEmpty())
            limits.budget = profiler::parseMoney(budget_->text().trimmed().toStdString(), "budget");
    } catch (const std::invalid_argument& e) {
        problems << tr("%1 (no budget applied)").arg(str(e.what()));
    }
    if (!projectionError_.isEmpty()) problems << tr("sweep: %1").arg(projectionError_);
    if (runs_ && !runs_->error.isEmpty()) problems << tr("run store: %1").arg(runs_->error);
    problem_->setText(problems.join(QLatin1Char('\n')));
    problem_->setVisible(!problems.isEmpty());
    if (!runs_) return;

    const app::CandidateOptions options{pretraining_->isChecked()};
    auto candidates = points_.empty() ? app::groupCandidates(runs_->runs, runs_->groups, options)
                                      : app::sweepCandidates(points_, runs_->runs, runs_->groups, options);
    profiler::Plan plan = profiler::rankPlan(std::move(candidates), limits,
                                             order_->currentIndex() == 1 ? profiler::PlanOrder::Cost : profiler::PlanOrder::Time);
    std::vector<PlanChartPoint> points;
    int notDrawn = 0;
    for (const profiler::PlanRow& r : plan.rows) {
        const auto& c = r.candidate;
        if (!c.seconds || !c.cost) {
            ++notDrawn;
            continue;
        }
        points.push_back({str(c.label), QString::fromLatin1(profiler::planSourceName(c.source)), *c.seconds, *c.cost,
                          r.meetsBoth()});
    }
    chart_->setPlan(std::move(points), limits.deadline_seconds, limits.budget, notDrawn);

    QStringList lines;
    const QString target = QString::number(runs_->target * 100.0, 'f', 2) + QStringLiteral(" %");
    if (plan.rows.empty()) {
        lines << tr("No runs in the store to plan with.");
    } else {
        const QString fastest = pick(plan, plan.fastest_within_budget);
        const QString cheapest = pick(plan, plan.cheapest_within_deadline);
        lines << tr("To %1 test accuracy: %2 of %3 configurations meet both limits.")
                     .arg(target)
                     .arg(std::count_if(plan.rows.begin(), plan.rows.end(), [](const auto& r) { return r.meetsBoth(); }))
                     .arg(plan.rows.size());
        lines << (limits.budget ? tr("Fastest within budget: %1").arg(fastest.isEmpty() ? tr("none") : fastest)
                                : tr("Fastest: %1").arg(fastest.isEmpty() ? tr("none") : fastest));
        lines << (limits.deadline_seconds ? tr("Cheapest within deadline: %1").arg(cheapest.isEmpty() ? tr("none with a known cost") : cheapest)
                                          : tr("Cheapest: %1").arg(cheapest.isEmpty() ? tr("none with a known cost") : cheapest));
    }
    summary_->setText(lines.join(QStringLiteral("   ·   ")));
    model_->setPlan(std::move(plan));
    emit planChanged();
}

}  // namespace trainbench::ui
