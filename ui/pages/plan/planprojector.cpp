#include "ui/pages/plan/planprojector.h"

#include <exception>

#include "app/experiment/experimenterror.h"
#include "app/experiment/sweep.h"

namespace trainbench::ui {

PlanProjector::PlanProjector(QObject* parent) : QObject(parent) { pool_.setMaxThreadCount(1); }

PlanProjector::~PlanProjector() {
    generation_ = ~quint64{0};  // nothing pending is wanted any more
    pool_.clear();
    pool_.waitForDone();
}

ProjectionInput PlanProjector::estimate(const QString& file) {
    ProjectionInput in;
    in.file = file;
    if (file.isEmpty()) return in;
    try {
        in.points = app::estimatePoints(app::loadSweepFile(file.toStdString()));
    } catch (const std::exception& e) {
        in.error = QString::fromStdString(e.what());
    }
    return in;
}

void PlanProjector::request(const QString& file) {
    const quint64 generation = ++generation_;
    pool_.clear();  // a queued estimate that has not started is superseded
    if (file.isEmpty()) {
        ProjectionInput none;
        none.generation = generation;
        emit estimated(none);
        return;
    }
    pool_.start([this, generation, file] {
        if (generation != generation_) return;
        ProjectionInput in = estimate(file);
        in.generation = generation;
        QMetaObject::invokeMethod(
            this,
            [this, in = std::move(in)] {
                if (in.generation == generation_) emit estimated(in);
            },
            Qt::QueuedConnection);
    });
}

}  // namespace trainbench::ui
