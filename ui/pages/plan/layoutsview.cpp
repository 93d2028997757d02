#include "ui/pages/plan/layoutsview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

#include "ui/charts/stackedbars.h"
#include "ui/models/layouttablemodel.h"
#include "ui/pages/plan/planwidgets.h"

namespace trainbench::ui {

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

// The step's parts as the planner splits them, with the step-time colours they stand for.
std::vector<StackPart> layoutParts() {
    return {{QStringLiteral("compute"), QStringLiteral("forward"), QStringLiteral("compute_seconds")},
            {QStringLiteral("recompute"), QStringLiteral("recompute"), QStringLiteral("recompute_seconds")},
            {QStringLiteral("bubble"), QStringLiteral("bubble"), QStringLiteral("bubble_seconds")},
            {QStringLiteral("TP comm"), QStringLiteral("tensor communication"), QStringLiteral("tensor_comm_seconds")},
            {QStringLiteral("PP comm"), QStringLiteral("pipeline communication"), QStringLiteral("pipeline_comm_seconds")},
            {QStringLiteral("DP comm (exposed)"), QStringLiteral("data communication"), QStringLiteral("data_comm_seconds")},
            {QStringLiteral("optimizer, overhead"), QStringLiteral("other"), QStringLiteral("other_seconds")}};
}

QString parameters(double n) {
    return n >= 1e9 ? QStringLiteral("%1 B").arg(n / 1e9, 0, 'f', 1) : QStringLiteral("%1 M").arg(n / 1e6, 0, 'f', 1);
}

}  // namespace

LayoutsView::LayoutsView(QWidget* parent) : QWidget(parent) {
    modelFile_ = new QLineEdit;
    modelFile_->setPlaceholderText(tr("a transformer description (JSON) or an ONNX graph"));
    const QString shipped = QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments/models/gpt3-175b.json");
    if (QFileInfo::exists(shipped)) modelFile_->setText(shipped);
    auto* browse = new QPushButton(tr("Browse…"));
    device_ = new QComboBox;
    device_->addItems(devices());
    const int a100 = device_->findText(QStringLiteral("a100-sxm4-80gb"));
    if (a100 >= 0) device_->setCurrentIndex(a100);
    device_->setToolTip(tr("The GPU of the catalog (those with NVLink figures)"));
    count_ = new QSpinBox;
    count_->setRange(1, 1 << 20);
    count_->setValue(1024);
    count_->setToolTip(tr("GPUs to split the model and its batch over"));
    batch_ = new QSpinBox;
    batch_->setRange(0, 1 << 24);
    batch_->setSpecialValueText(tr("the model's"));
    batch_->setToolTip(tr("Sequences per step (0: the model file's global_batch)"));
    order_ = new QComboBox;
    order_->addItems({tr("by step time"), tr("by cost")});
    exhaustive_ = new QCheckBox(tr("Every layout"));
    exhaustive_->setToolTip(tr("Estimate every layout instead of the fast search's few (slower; the same best within 5 %)"));
    planButton_ = new QPushButton(tr("Plan"));
    planButton_->setDefault(true);

    auto* inputs = new QHBoxLayout;
    inputs->addWidget(new QLabel(tr("Model")));
    inputs->addWidget(modelFile_, 1);
    inputs->addWidget(browse);
    auto* cluster = new QHBoxLayout;
    const std::pair<const char*, QWidget*> fields[] = {{"GPU", device_}, {"Count", count_}, {"Global batch", batch_}};
    for (const auto& [label, w] : fields) {
        cluster->addWidget(new QLabel(tr(label)));
        cluster->addWidget(w);
    }
    cluster->addWidget(order_);
    cluster->addWidget(exhaustive_);
    cluster->addStretch(1);
    cluster->addWidget(planButton_);

    problem_ = planwidgets::problemLabel();
    summary_ = planwidgets::summaryLabel();
    model_ = new LayoutTableModel(this);
    table_ = planwidgets::rankedTable(model_);
    bars_ = new StackedBars(layoutParts(), QStringLiteral("layout"), tr("per step on the busiest GPU"));
    bars_->setTitle(tr("Step time by part, best layouts"));
    bars_->setMinimumHeight(260);
    bars_->setMinimumWidth(640);  // room for the layouts' names and the parts' legend
    rejected_ = new QTreeWidget;
    rejected_->setHeaderLabels({tr("Rejected layout"), tr("Why"), tr("Layouts")});
    rejected_->setRootIsDecorated(false);
    rejected_->setWordWrap(false);
    rejected_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    rejected_->header()->setSectionResizeMode(1, QHeaderView::Stretch);
    rejected_->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    rejected_->header()->setStretchLastSection(false);

    auto* lower = new QSplitter(Qt::Horizontal);
    lower->addWidget(bars_);
    lower->addWidget(rejected_);
    lower->setStretchFactor(0, 3);
    lower->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(table_);
    split->addWidget(lower);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(inputs);
    layout->addLayout(cluster);
    layout->addWidget(problem_);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);

    connect(planButton_, &QPushButton::clicked, this, &LayoutsView::plan);
    connect(modelFile_, &QLineEdit::returnPressed, this, &LayoutsView::plan);
    connect(browse, &QPushButton::clicked, this, &LayoutsView::chooseModel);
}

QStringList LayoutsView::devices() const {
    QStringList out;
    for (const std::string& id : app::layoutPlannerGpus()) out << str(id);
    return out;
}

void LayoutsView::setModelFile(const QString& path) { modelFile_->setText(path); }

void LayoutsView::setDevice(const QString& id) {
    const int i = device_->findText(id);
    if (i >= 0) device_->setCurrentIndex(i);
}

void LayoutsView::setDeviceCount(int count) { count_->setValue(count); }
void LayoutsView::setGlobalBatch(qint64 batch) { batch_->setValue(static_cast<int>(batch)); }
void LayoutsView::setByCost(bool byCost) { order_->setCurrentIndex(byCost ? 1 : 0); }
void LayoutsView::setExhaustive(bool on) { exhaustive_->setChecked(on); }

app::LayoutPlanOptions LayoutsView::options() const {
    app::LayoutPlanOptions o;
    o.model = modelFile_->text().trimmed().toStdString();
    o.device = device_->currentText().toStdString();
    o.count = count_->value();
    o.global_batch = batch_->value();
    o.by_cost = order_->currentIndex() == 1;
    o.exhaustive = exhaustive_->isChecked();
    return o;
}

LayoutPlanResult LayoutsView::search(const app::LayoutPlanOptions& options) {
    LayoutPlanResult r;
    if (options.model.empty()) {
        r.error = tr("Choose a model: a transformer description (experiments/models/gpt3-175b.json) or an ONNX graph.");
        return r;
    }
    QElapsedTimer clock;
    clock.start();
    try {
        r.plan = std::make_shared<const app::LayoutPlanReport>(app::layoutPlanReport(options));
    } catch (const std::exception& e) {
        r.error = str(e.what());
    }
    r.seconds = static_cast<double>(clock.nsecsElapsed()) * 1e-9;
    return r;
}

void LayoutsView::plan() {
    planButton_->setEnabled(false);
    summary_->setText(tr("Searching the layouts…"));
    const app::LayoutPlanOptions o = options();
    jobs_.startLatest([o] { return search(o); },
                      [this](const LayoutPlanResult& r) {
                          planButton_->setEnabled(true);
                          display(r);
                      });
}

void LayoutsView::display(const LayoutPlanResult& r) {
    result_ = r;
    std::vector<app::LayoutFigures> ranked;
    std::vector<StackedRow> rows;
    rejected_->clear();
    if (r.plan) {
        const app::LayoutPlanReport& p = *r.plan;
        ranked.assign(p.ranked.begin(), p.ranked.begin() + std::min<ptrdiff_t>(kTableRows, std::ssize(p.ranked)));
        for (size_t i = 0; i < p.ranked.size() && i < static_cast<size_t>(kBars); ++i) {
            const app::LayoutFigures& e = p.ranked[i];
            rows.push_back({QStringLiteral("%1. %2").arg(i + 1).arg(str(e.layout)),
                            {e.compute_seconds, e.recompute_seconds, e.bubble_seconds, e.tensor_comm_seconds,
                             e.pipeline_comm_seconds, e.data_comm_seconds, e.optimizer_seconds + e.overhead_seconds}});
        }
        for (const app::RejectedLayoutFigures& x : p.rejected) {
            auto* item = new QTreeWidgetItem({str(x.layout), str(x.why), QString::number(x.count)});
            item->setToolTip(1, str(x.why));
            item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
            rejected_->addTopLevelItem(item);
        }
    }
    model_->setLayouts(std::move(ranked));
    bars_->setRows(std::move(rows));
    const QString problem = problemText();
    problem_->setText(problem);
    problem_->setVisible(!problem.isEmpty());
    summary_->setText(summaryText());
    emit resultReady();
}

QString LayoutsView::problemText() const {
    if (!result_.error.isEmpty()) return result_.error;
    if (!result_.plan || !result_.plan->ranked.empty()) return {};
    const app::LayoutPlanReport& p = *result_.plan;
    QString text = tr("No layout of %1 × %2 fits memory.").arg(p.devices).arg(str(p.device));
    // What it would take: per recomputation option, the fewest GPUs one replica fits on.
    for (const app::LayoutFigures& e : p.splits)
        text += tr(" With %1 recomputation one replica fits on %2 GPUs as p%3 t%4 (%5 GiB per GPU).")
                    .arg(str(e.recompute))
                    .arg(e.data * e.pipeline * e.tensor)
                    .arg(e.pipeline)
                    .arg(e.tensor)
                    .arg(str(app::layoutGib(e.memory_bytes)));
    return text;
}

QString LayoutsView::summaryText() const {
    if (!result_.plan) return {};
    const app::LayoutPlanReport& p = *result_.plan;
    QString text = tr("%1: %2 parameters, %3 layers, hidden %4, %5 heads, sequence %6; batch %7 on %8 × %9 (%10 per node). ")
                       .arg(str(p.model), parameters(p.parameters))
                       .arg(p.layers)
                       .arg(p.hidden)
                       .arg(p.heads)
                       .arg(p.sequence)
                       .arg(p.global_batch)
                       .arg(p.devices)
                       .arg(str(p.device))
                       .arg(p.devices_per_node);
    const QString took = result_.seconds >= 1.0 ? tr("%1 s").arg(result_.seconds, 0, 'f', 1)
                                                 : tr("%1 ms").arg(std::max(1.0, result_.seconds * 1e3), 0, 'f', 0);
    text += tr("%1 search: %2 of %3 layouts estimated (%4 %) in %5, %6 fit.")
                .arg(p.exhaustive ? tr("Exhaustive") : tr("Fast"))
                .arg(p.evaluated)
                .arg(p.candidates)
                .arg(100.0 * static_cast<double>(p.evaluated) / static_cast<double>(std::max<int64_t>(1, p.candidates)), 0, 'f', 1)
                .arg(took)
                .arg(p.ranked.size());
    if (!p.ranked.empty()) {
        const app::LayoutFigures& best = p.ranked.front();
        text += tr(" Best %1: %2: %3 s per step, %4 TFLOP/s per GPU, $%5 per step.")
                    .arg(p.by_cost ? tr("by cost") : tr("by step time"))
                    .arg(str(best.layout))
                    .arg(str(app::layoutSeconds(best.step_seconds)))
                    .arg(best.model_tflops_per_gpu, 0, 'f', 1)
                    .arg(best.usd_per_step, 0, 'f', 2);
    }
    return text;
}

void LayoutsView::chooseModel() {
    const QString current = modelFile_->text();
    const QString dir = current.isEmpty() ? QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments/models")
                                          : QFileInfo(current).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Model to split"), dir,
                                                      tr("Transformer descriptions and ONNX graphs (*.json *.onnx);;All files (*)"));
    if (path.isEmpty()) return;
    modelFile_->setText(path);
    plan();
}

}  // namespace trainbench::ui
