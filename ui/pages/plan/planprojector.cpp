#include "ui/pages/plan/planprojector.h"

#include <exception>

#include "app/experiment/experimenterror.h"
#include "app/experiment/sweep.h"

namespace trainbench::ui {

PlanProjector::PlanProjector(QObject* parent) : QObject(parent) {}

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
    if (file.isEmpty()) {
        jobs_.cancelAll();  // an estimate in progress is superseded
        emit estimated(ProjectionInput{});
        return;
    }
    jobs_.startLatest([file] { return estimate(file); }, [this](const ProjectionInput& in) { emit estimated(in); });
}

}  // namespace trainbench::ui
