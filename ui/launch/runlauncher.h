#pragma once
// Starts runs as their own processes (`trainbench-cli run FILE --db STORE`), detached: a run
// outlives the GUI if the user leaves it running, and a crashing run cannot take the GUI down.
// Each child writes its output to a log file; the launcher watches its pid and, when it ends,
// reports it with the log's last lines (what a run that never reached the store said, such as a
// validation error). The store tells the rest: the GUI matches a run to its process by pid.
#include <QDateTime>
#include <QObject>
#include <QString>
#include <QStringList>

#include <vector>

class QTimer;

namespace trainbench::ui {

struct LaunchedRun {
    qint64 pid = 0;
    QString experiment;  // the file it runs
    QString logPath;
    QDateTime started;
};

class RunLauncher : public QObject {
    Q_OBJECT
public:
    explicit RunLauncher(QObject* parent = nullptr);
    ~RunLauncher() override;

    // The trainbench-cli to run: $TRAINBENCH_CLI, else next to this program, else the build tree's
    // app/ folder, else the PATH. Empty when none is found.
    static QString findCli();
    void setCliPath(const QString& path) { cli_ = path; }
    QString cliPath() const { return cli_; }

    // Starts `cli run experiment --db db [--set k=v]...`; returns its pid, or 0 after emitting
    // launchFailed().
    qint64 launch(const QString& experiment, const QString& db, const QStringList& overrides = {});

    // Processes started here that are still alive.
    const std::vector<LaunchedRun>& running() const { return running_; }
    // Asks each to stop (SIGINT: the run finishes its step, records 'stopped' and exits).
    void stopAll();
    static bool stop(qint64 pid);

    // How many lines of the log finished() carries.
    static constexpr int kLogTailLines = 12;

signals:
    void launched(const trainbench::ui::LaunchedRun& run);
    void launchFailed(const QString& message);
    // The process is gone; logTail: its last output lines.
    void finished(const trainbench::ui::LaunchedRun& run, const QString& logTail);

private:
    void checkAlive();
    static QString tailOf(const QString& path, int lines);

    QString cli_;
    std::vector<LaunchedRun> running_;
    QTimer* timer_ = nullptr;
    int counter_ = 0;
};

}  // namespace trainbench::ui

Q_DECLARE_METATYPE(trainbench::ui::LaunchedRun)
