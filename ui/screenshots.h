#pragma once
// `trainbench --screenshot DIR`: each page of the window, filled from its run store, rendered to
// DIR/<page>.png for documentation and review (the README's picture comes from here).
#include <QString>

namespace trainbench::ui {

class MainWindow;

// Waits for the store, picks what each page shows (the run with the most steps and a verdict for
// the dashboard; up to six finished runs for Compare, and the newest data.fraction sweep for
// compare-data.png when the store holds one), renders each page and writes the PNGs.
// False, with the reason on stderr, if the store has no runs or a file cannot be written.
bool renderScreenshots(MainWindow& window, const QString& dir);

}  // namespace trainbench::ui
