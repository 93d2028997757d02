#pragma once
// Shared by the whole-window tests: a short experiment file to launch, and a run of the store by name.
#include <QFile>
#include <QTemporaryDir>

#include <string>

#include "ui/mainwindow.h"
#include "ui/store/storeservice.h"

namespace trainbench::ui::testutil {

// An MLP on a slice of the default data set, max_steps steps, evaluating every evalEvery (0: never).
// `strategy`: the strategy section's members, e.g. "\"type\": \"pipeline\"" (none: one device).
inline QString writeExperiment(const QTemporaryDir& dir, const QString& name, int steps, int evalEvery,
                               const QString& strategy = {}) {
    const QString path = dir.filePath(name + QStringLiteral(".json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(QStringLiteral("{\"name\": \"%1\", \"seed\": 3, \"data\": {\"train_limit\": 1280, \"test_limit\": 500},"
                           " \"model\": {\"preset\": \"mlp\"}, \"train\": {\"batch_size\": 64, \"epochs\": 0,"
                           " \"max_steps\": %2, \"eval_every_steps\": %3, \"eval_at_epoch_end\": false, \"threads\": 1}%4}")
                .arg(name)
                .arg(steps)
                .arg(evalEvery)
                .arg(strategy.isEmpty() ? QString() : QStringLiteral(", \"strategy\": {%1}").arg(strategy))
                .toUtf8());
    return path;
}

// The newest run of that name in the window's latest run list, or nullptr.
inline const profiler::RunRow* runNamed(MainWindow& w, const std::string& name) {
    const auto runs = w.store().runs();
    if (!runs) return nullptr;
    for (const auto& r : runs->runs)
        if (r.name == name) return &r;
    return nullptr;
}

}  // namespace trainbench::ui::testutil
