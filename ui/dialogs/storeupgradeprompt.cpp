#include "ui/dialogs/storeupgradeprompt.h"

#include <QDir>
#include <QMessageBox>
#include <QPushButton>

#include "ui/store/storeservice.h"

namespace trainbench::ui {

bool StoreUpgradePrompt::confirm(QWidget* parent, StoreService& store, const QString& change) {
    const StoreInfo& info = store.info();
    if (!info.needsMigration) return true;
    QMessageBox box(QMessageBox::Question, QObject::tr("Upgrade the run store?"),
                    QObject::tr("To %1, trainbench must first upgrade the run store %2 from schema %3 to schema %4.")
                        .arg(change, QDir::toNativeSeparators(info.path))
                        .arg(info.schemaVersion)
                        .arg(info.binarySchemaVersion),
                    QMessageBox::Yes | QMessageBox::Cancel, parent);
    box.setInformativeText(
        QObject::tr("The upgrade keeps every run; it only adds tables and columns. Afterwards, older trainbench "
                    "versions (up to schema %1) can still show the store, but can no longer change it or record "
                    "runs in it.\n\nCancel leaves the file exactly as it is, and nothing is changed.")
            .arg(info.schemaVersion));
    box.button(QMessageBox::Yes)->setText(QObject::tr("Upgrade"));
    box.setDefaultButton(QMessageBox::Cancel);
    if (box.exec() != QMessageBox::Yes) return false;
    store.upgrade();
    return true;
}

}  // namespace trainbench::ui
