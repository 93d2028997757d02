// trainbench: the desktop application. `trainbench [--db PATH] [EXPERIMENT.json]`;
// `trainbench --screenshot DIR [--db PATH]` renders every page to PNG and exits.
#include <QApplication>

#include <cstdio>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QTimer>

#include "app/run/paths.h"
#include "app/run/versions.h"
#include "ui/mainwindow.h"
#include "ui/models/runtablemodel.h"
#include "ui/pages/runspage.h"
#include "ui/store/storeservice.h"
#include "ui/pages/experiment/experimentpage.h"
#include "ui/screenshots.h"

int main(int argc, char** argv) {
    QElapsedTimer sinceStart;
    sinceStart.start();
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("trainbench"));
    QApplication::setOrganizationName(QStringLiteral("trainbench"));
    QApplication::setApplicationVersion(QString::fromStdString(trainbench::app::trainbenchVersion()));
    QApplication::setDesktopFileName(QStringLiteral("trainbench"));

    QCommandLineParser cli;
    cli.setApplicationDescription(QStringLiteral("trainbench: train, profile and compare models"));
    cli.addHelpOption();
    cli.addVersionOption();
    QCommandLineOption db(QStringLiteral("db"), QStringLiteral("Run store (SQLite file); default: %1")
                                                    .arg(QString::fromStdString(trainbench::app::defaultRunStorePath())),
                          QStringLiteral("path"));
    QCommandLineOption shots(QStringLiteral("screenshot"),
                             QStringLiteral("Render each page to DIR/<page>.png (with the store's runs) and exit"),
                             QStringLiteral("dir"));
    // For `trainbench-ui-bench startup`: print "ready <ms>" once the window is up with the store's
    // runs listed and the event loop turning, then quit.
    QCommandLineOption probe(QStringLiteral("startup-probe"), QStringLiteral("Print the start-up time and exit"));
    probe.setFlags(QCommandLineOption::HiddenFromHelp);
    cli.addOption(db);
    cli.addOption(shots);
    cli.addOption(probe);
    cli.addPositionalArgument(QStringLiteral("experiment"), QStringLiteral("An experiment file to open"), QStringLiteral("[experiment]"));
    cli.process(app);

    const QString store = cli.isSet(db) ? cli.value(db) : QString::fromStdString(trainbench::app::defaultRunStorePath());
    trainbench::ui::MainWindow window(store);
    if (!cli.positionalArguments().isEmpty()) window.experimentPage()->loadFile(cli.positionalArguments().front());
    if (cli.isSet(shots)) {
        window.setOnClose(trainbench::ui::MainWindow::OnClose::LeaveRunning);
        return trainbench::ui::renderScreenshots(window, cli.value(shots)) ? 0 : 1;
    }
    window.show();
    if (cli.isSet(probe)) {
        QObject::connect(&window.store(), &trainbench::ui::StoreService::runsChanged, &window, [&] {
            // Queued behind the model's update and the repaint it caused: the window is usable.
            QTimer::singleShot(0, &window, [&] {
                std::printf("ready %lld ms, %d runs\n", static_cast<long long>(sinceStart.elapsed()),
                            window.runsPage()->model().rowCount());
                std::fflush(stdout);
                window.setOnClose(trainbench::ui::MainWindow::OnClose::LeaveRunning);
                QApplication::quit();
            });
        });
    }
    return QApplication::exec();
}
