#include "ui/pages/experiment/recentfiles.h"

#include <QSettings>

namespace trainbench::ui {

namespace {
constexpr int kMax = 10;
const char* kGroup = "experiment";
const char* kKey = "recentFiles";
}  // namespace

QStringList recentExperimentFiles() {
    QSettings settings;
    settings.beginGroup(QLatin1String(kGroup));
    return settings.value(QLatin1String(kKey)).toStringList();
}

void addRecentExperimentFile(const QString& path) {
    QStringList files = recentExperimentFiles();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMax) files.removeLast();
    QSettings settings;
    settings.beginGroup(QLatin1String(kGroup));
    settings.setValue(QLatin1String(kKey), files);
}

}  // namespace trainbench::ui
