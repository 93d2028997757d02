#include "ui/pages/experiment/experimentvalidator.h"

#include "app/experiment/sweep.h"

namespace trainbench::ui {

ExperimentValidator::ExperimentValidator(QObject* parent) : QObject(parent) {}

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
    jobs_.startLatest([text = text.toStdString(), source = sourceName.toStdString()] { return validate(text, source); },
                      [this](const ValidationResult& r) { emit validated(r); });
}

}  // namespace trainbench::ui
