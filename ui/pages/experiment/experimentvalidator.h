#pragma once
// Checks experiment text with the CLI's own parser (app::expandSweep, which runs app::parseExperiment
// on the file and on every point of its sweep) on a worker thread: a sweep of many points must not
// stall typing. A result superseded by a newer request is dropped.
#include <atomic>
#include <string>
#include <vector>

#include <QObject>
#include <QStringList>
#include <QThreadPool>

#include "app/experiment/experimenterror.h"

namespace trainbench::ui {

struct ValidationResult {
    quint64 generation = 0;
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
    ~ExperimentValidator() override;  // waits for a check in progress

    // Checks text named sourceName (relative paths resolve against its folder); validated() follows
    // unless another request comes first.
    void request(const QString& text, const QString& sourceName);
    // The same, here and now.
    static ValidationResult validate(const std::string& text, const std::string& sourceName);

signals:
    void validated(const trainbench::ui::ValidationResult& result);

private:
    QThreadPool pool_;
    std::atomic<quint64> generation_{0};
};

}  // namespace trainbench::ui
