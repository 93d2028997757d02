#pragma once
// The experiment files opened or saved last, newest first: QSettings group "experiment", key
// "recentFiles", at most ten.
#include <QStringList>

namespace trainbench::ui {

QStringList recentExperimentFiles();
void addRecentExperimentFile(const QString& path);

}  // namespace trainbench::ui
