#include "ui/pages/inference/serveview.h"

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "ui/charts/latencybars.h"
#include "ui/charts/timeserieschart.h"
#include "ui/models/loadtestcurves.h"

namespace trainbench::ui {

ServeView::ServeView(QWidget* parent) : QWidget(parent) {
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::RichText);
    curve_ = new TimeSeriesChart;
    curve_->setTitle(tr("Latency against throughput"));
    curve_->setAxisTitles(tr("achieved QPS"), tr("latency (ms)"));
    qps_ = new TimeSeriesChart;
    qps_->setTitle(tr("Queries per second"));
    qps_->setAxisTitles(tr("seconds into the test"), tr("QPS"));
    latency_ = new TimeSeriesChart;
    latency_->setTitle(tr("Latency per second"));
    latency_->setAxisTitles(tr("seconds into the test"), tr("ms"));
    bars_ = new LatencyBars;
    bars_->setTitle(tr("Where a query's time went (best point)"));
    auto* grid = new QGridLayout;
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(curve_, 0, 0);
    grid->addWidget(bars_, 0, 1);
    grid->addWidget(qps_, 1, 0);
    grid->addWidget(latency_, 1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(summary_);
    layout->addLayout(grid, 1);
}

void ServeView::clear() {
    for (TimeSeriesChart* c : {curve_, qps_, latency_}) c->clear();
    bars_->setParts({});
    summary_->clear();
}

void ServeView::setRun(const RunUpdate& u) {
    using namespace loadtest;
    const auto& pts = u.loadTestPoints;
    curve_->setSeries(std::vector<Series>{Series::make(QStringLiteral("p50"), latencyCurve(pts, Percentile::P50)),
                                          Series::make(QStringLiteral("p99"), latencyCurve(pts, Percentile::P99))});
    qps_->setSeries(std::vector<Series>{Series::make(QStringLiteral("QPS"), secondSeries(pts, SecondValue::Qps))});
    latency_->setSeries(std::vector<Series>{Series::make(QStringLiteral("p50"), secondSeries(pts, SecondValue::P50)),
                                            Series::make(QStringLiteral("p99"), secondSeries(pts, SecondValue::P99))});
    const profiler::LoadTestPoint* best = bestPoint(pts, latencyBoundMs(u.attributes));
    if (best)
        bars_->setParts({{tr("queue"), best->queue_ms},
                         {tr("batch"), best->batch_ms},
                         {tr("compute"), best->compute_ms},
                         {tr("serialise"), best->serialize_ms},
                         {tr("network"), best->network_ms}});
    else
        bars_->setParts({});
    QString text = tr("<b>%1</b> · %2 point(s)").arg(configurationLabel(u.attributes).toHtmlEscaped()).arg(pts.size());
    const QString model = modelLabel(u.attributes);
    if (!model.isEmpty()) text += tr(" · model: %1").arg(model.toHtmlEscaped());
    if (best) {
        const auto bound = latencyBoundMs(u.attributes);
        text += bound ? tr(" · best within p99 ≤ %1 ms: %2 QPS").arg(*bound).arg(best->achieved_qps, 0, 'f', 1)
                      : tr(" · best: %1 QPS").arg(best->achieved_qps, 0, 'f', 1);
        if (best->p99_ms) text += tr(", p99 %1 ms").arg(*best->p99_ms, 0, 'f', 2);
        if (auto c = costPerMillion(u.row, best->achieved_qps, instancesPerQuery(u.attributes)))
            text += tr(", $%1 per million predictions").arg(*c, 0, 'f', *c < 1 ? 4 : 2);
        if (best->client_bound) text += tr(" · <span style='color:#d03030'>client-bound: the load generator could not keep up</span>");
    }
    if (pts.empty())
        text += u.row.status == profiler::RunStatus::Running ? tr(" · waiting for the first point…")
                                                             : tr(" · this load test recorded no points");
    summary_->setText(text);
}

}  // namespace trainbench::ui
