#include "ui/pages/experiment/experimentvalidator.h"

#include "app/experiment/sweep.h"

namespace trainbench::ui {

ExperimentValidator::ExperimentValidator(QObject* parent) : QObject(parent) { pool_.setMaxThreadCount(1); }

ExperimentValidator::~ExperimentValidator() {
    generation_ = ~quint64{0};  // nothing pending is wanted any more
    pool_.clear();
    pool_.waitForDone();
}

ValidationResult ExperimentValidator::validate(const std::string& text, const std::string& sourceName) {
    ValidationResult r;
    r.text = text;
    try {
        const std::vector<app::SweepPoint> points = app::expandSweep(text, sourceName);
        r.valid = true;
        r.sweep = points.size() > 1 || !points.front().settings.empty();
        for (const app::SweepPoint& p : points) r.pointNames << QString::fromStdString(p.name);
    } catch (const app::ExperimentError& e) {
        r.issues = e.issues();
        for (const app::ExperimentIssue& issue : r.issues)
            r.lines << QString::fromStdString(app::ExperimentError::format(e.source(), {issue}));
    }
    return r;
}

void ExperimentValidator::request(const QString& text, const QString& sourceName) {
    const quint64 generation = ++generation_;
    pool_.clear();  // a queued check that has not started is superseded
    pool_.start([this, generation, text = text.toStdString(), source = sourceName.toStdString()] {
        if (generation != generation_) return;
        ValidationResult r = validate(text, source);
        r.generation = generation;
        QMetaObject::invokeMethod(
            this,
            [this, r = std::move(r)] {
                if (r.generation == generation_) emit validated(r);
            },
            Qt::QueuedConnection);
    });
}

}  // namespace trainbench::ui
