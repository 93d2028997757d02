// trainbench: the desktop application. `trainbench [--db PATH] [EXPERIMENT.json]`;
// `trainbench --screenshot DIR [--db PATH]` renders every page to PNG and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QTimer>

#include "app/run/paths.h"
#include "app/run/versions.h"
#include "ui/mainwindow.h"
#include "ui/pages/experiment/experimentpage.h"
#include "ui/screenshots.h"

int main(int argc, char** argv) {
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
    cli.addOption(db);
    cli.addOption(shots);
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
    return QApplication::exec();
}
