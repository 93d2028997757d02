#pragma once
// Asked before the first change to a run store of an older schema (renaming or deleting a run,
// starting a run in it): the change needs the store upgraded to this binary's schema, after which
// older trainbench versions can only read it. Until the user agrees the store stays as it was.
#include <QString>

class QWidget;

namespace trainbench::ui {

class StoreService;

class StoreUpgradePrompt {
public:
    // True when the change may go ahead: the store needs no upgrade, or the user chose Upgrade
    // (then the store is being upgraded; changes sent after this one follow the upgrade). False,
    // with nothing written, when the user cancelled. `change` completes "To %1, ...", e.g.
    // "rename the run".
    static bool confirm(QWidget* parent, StoreService& store, const QString& change);
};

}  // namespace trainbench::ui
