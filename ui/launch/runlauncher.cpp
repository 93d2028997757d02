#include "ui/launch/runlauncher.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTimer>

#include <signal.h>

#include <cerrno>

namespace trainbench::ui {

namespace {

bool alive(qint64 pid) {
    // Detached children are re-parented away from us, so they never linger as our zombies.
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

RunLauncher::RunLauncher(QObject* parent) : QObject(parent), cli_(findCli()) {
    qRegisterMetaType<LaunchedRun>();
    timer_ = new QTimer(this);
    timer_->setInterval(250);
    connect(timer_, &QTimer::timeout, this, &RunLauncher::checkAlive);
}

RunLauncher::~RunLauncher() = default;

QString RunLauncher::findCli() {
    const QString env = qEnvironmentVariable("TRAINBENCH_CLI");
    if (!env.isEmpty() && QFileInfo(env).isExecutable()) return QFileInfo(env).absoluteFilePath();
    const QString here = QCoreApplication::applicationDirPath();
    for (const QString& candidate : {here + QStringLiteral("/trainbench-cli"), here + QStringLiteral("/../app/trainbench-cli")})
        if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
#ifdef TRAINBENCH_CLI_BUILD_PATH
    if (QFileInfo(QStringLiteral(TRAINBENCH_CLI_BUILD_PATH)).isExecutable()) return QStringLiteral(TRAINBENCH_CLI_BUILD_PATH);
#endif
    return QStandardPaths::findExecutable(QStringLiteral("trainbench-cli"));
}

qint64 RunLauncher::launch(const QString& experiment, const QString& db, const QStringList& overrides) {
    if (cli_.isEmpty()) {
        emit launchFailed(tr("trainbench-cli was not found next to this program or on the PATH; set TRAINBENCH_CLI"));
        return 0;
    }
    const QString logDir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/logs");
    if (!QDir().mkpath(logDir)) {
        emit launchFailed(tr("cannot create the log folder %1").arg(logDir));
        return 0;
    }
    const QDateTime now = QDateTime::currentDateTime();
    const QString log = QStringLiteral("%1/run-%2-%3-%4.log")
                            .arg(logDir, now.toString(QStringLiteral("yyyyMMdd-HHmmss")))
                            .arg(QCoreApplication::applicationPid())
                            .arg(++counter_);
    QStringList args{QStringLiteral("run"), experiment, QStringLiteral("--db"), db};
    for (const QString& o : overrides) args << QStringLiteral("--set") << o;
    QProcess process;
    process.setProgram(cli_);
    process.setArguments(args);
    process.setWorkingDirectory(QFileInfo(experiment).absolutePath());
    process.setStandardOutputFile(log);
    process.setStandardErrorFile(log, QIODevice::Append);
    process.setStandardInputFile(QProcess::nullDevice());
    qint64 pid = 0;
    if (!process.startDetached(&pid) || pid <= 0) {
        emit launchFailed(tr("could not start %1: %2").arg(cli_, process.errorString()));
        return 0;
    }
    LaunchedRun run{pid, experiment, log, now};
    running_.push_back(run);
    timer_->start();
    emit launched(run);
    return pid;
}

bool RunLauncher::stop(qint64 pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), SIGINT) == 0; }

void RunLauncher::stopAll() {
    for (const LaunchedRun& r : running_) stop(r.pid);
}

void RunLauncher::checkAlive() {
    std::vector<LaunchedRun> still;
    std::vector<LaunchedRun> ended;
    for (const LaunchedRun& r : running_) (alive(r.pid) ? still : ended).push_back(r);
    running_ = std::move(still);
    if (running_.empty()) timer_->stop();
    for (const LaunchedRun& r : ended) emit finished(r, tailOf(r.logPath, kLogTailLines));
}

QString RunLauncher::tailOf(const QString& path, int lines) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const qint64 size = f.size();
    f.seek(std::max<qint64>(0, size - 16384));
    QStringList all = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    // Progress lines rewrite themselves with '\r': keep what a terminal would show last.
    for (QString& l : all) l = l.section(QLatin1Char('\r'), -1);
    while (all.size() > lines) all.removeFirst();
    return all.join(QLatin1Char('\n'));
}

}  // namespace trainbench::ui
