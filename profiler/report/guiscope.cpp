#include "profiler/report/guiscope.h"

#include <QGuiApplication>

#include "profiler/report/reporterror.h"

namespace trainbench::profiler {

namespace {

QtMessageHandler previousHandler = nullptr;

// Starting Qt in a bare environment (no XDG_RUNTIME_DIR, as under sudo or in a container) warns about
// it on stderr; that is no concern of someone who asked for a PDF. Everything else goes through.
void quietHandler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (type == QtWarningMsg && message.startsWith(QLatin1String("QStandardPaths: "))) return;
    if (previousHandler) previousHandler(type, context, message);
}

}  // namespace

GuiScope::GuiScope(const char* what) {
    if (QCoreApplication* existing = QCoreApplication::instance()) {
        if (!qobject_cast<QGuiApplication*>(existing))
            throw ReportError(std::string(what) +
                              " needs Qt Gui, but this process runs a QCoreApplication; create a QGuiApplication instead");
        return;
    }
    if (qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) previousPlatform_ = qgetenv("QT_QPA_PLATFORM").toStdString();
    // Set before the application exists: the platform plugin is chosen in its constructor.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    previousHandler = qInstallMessageHandler(quietHandler);
    static int argc = 1;
    static char name[] = "trainbench";
    static char* argv[] = {name, nullptr};
    app_ = std::make_unique<QGuiApplication>(argc, argv);
}

GuiScope::~GuiScope() {
    if (!app_) return;
    app_.reset();
    qInstallMessageHandler(previousHandler);
    if (previousPlatform_)
        qputenv("QT_QPA_PLATFORM", QByteArray::fromStdString(*previousPlatform_));
    else
        qunsetenv("QT_QPA_PLATFORM");
}

}  // namespace trainbench::profiler
