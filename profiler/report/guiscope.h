#pragma once
// Qt Gui for the length of one call (PDF, PNG): fonts and painting need a QGuiApplication. In the
// GUI there is one already and this does nothing; in a headless process (the CLI, tests) it creates
// one on the `offscreen` platform and removes it again at the end of the scope.
#include <memory>
#include <optional>
#include <string>

class QGuiApplication;

namespace trainbench::profiler {

class GuiScope {
public:
    // Throws ReportError when the process has a QCoreApplication that is not a QGuiApplication
    // (Qt allows one application object per process). `what` names the call for that message.
    explicit GuiScope(const char* what);
    ~GuiScope();
    GuiScope(const GuiScope&) = delete;
    GuiScope& operator=(const GuiScope&) = delete;

private:
    std::unique_ptr<QGuiApplication> app_;
    std::optional<std::string> previousPlatform_;  // QT_QPA_PLATFORM before, restored after
};

}  // namespace trainbench::profiler
