#pragma once
// Reads a sweep experiment file and estimates each of its points (app::estimatePoints: the step time
// on its emulated devices, its price) on a worker thread, for the Plan page's projections: opening
// a data set for its shape must not stall the window. A result superseded by a newer request is
// dropped.
#include <vector>

#include <QObject>
#include <QString>

#include "app/plan/pointestimate.h"
#include "ui/jobs/jobtracker.h"

namespace trainbench::ui {

struct ProjectionInput {
    QString file;
    std::vector<app::PointEstimate> points;
    QString error;  // the file is invalid or its data set cannot be read
};

class PlanProjector : public QObject {
    Q_OBJECT
public:
    explicit PlanProjector(QObject* parent = nullptr);

    // estimated() follows unless another request comes first. An empty path: no sweep (at once).
    void request(const QString& file);
    // The same, here and now.
    static ProjectionInput estimate(const QString& file);

signals:
    void estimated(const trainbench::ui::ProjectionInput& input);

private:
    JobTracker jobs_;  // one estimate at a time; its end waits for an estimate in progress
};

}  // namespace trainbench::ui
