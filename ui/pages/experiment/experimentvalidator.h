#pragma once
// Checks experiment text with the CLI's own parser (app::expandSweep, which runs app::parseExperiment
// on the file and on every point of its sweep) on a worker thread: a sweep of many points must not
// stall typing. A result superseded by a newer request is dropped.
#include <string>
#include <vector>

#include <QObject>
#include <QStringList>

#include "app/experiment/experimenterror.h"
#include "ui/jobs/jobtracker.h"

namespace trainbench::ui {

struct ValidationResult {
    std::string text;  // what was checked
    bool valid = false;
    std::vector<app::ExperimentIssue> issues;
    QStringList lines;       // one per issue, exactly as `trainbench-cli validate` prints them
    QStringList pointNames;  // the runs: one, or one per sweep point
    bool sweep = false;      // the text has a sweep
};

class ExperimentValidator : public QObject {
    Q_OBJECT
public:
    explicit ExperimentValidator(QObject* parent = nullptr);

    // Checks text named sourceName (relative paths resolve against its folder); validated() follows
    // unless another request comes first.
    void request(const QString& text, const QString& sourceName);
    // The same, here and now.
    static ValidationResult validate(const std::string& text, const std::string& sourceName);

signals:
    void validated(const trainbench::ui::ValidationResult& result);

private:
    JobTracker jobs_;  // one check at a time; its end waits for a check in progress
};

}  // namespace trainbench::ui
