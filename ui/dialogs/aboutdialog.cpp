#include "ui/dialogs/aboutdialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <QtGlobal>

#include "app/run/versions.h"

namespace trainbench::ui {

QList<QPair<QString, QString>> AboutDialog::versions() {
    QList<QPair<QString, QString>> rows;
    rows.append({QStringLiteral("trainbench"), QString::fromStdString(app::trainbenchVersion())});
    rows.append({QStringLiteral("Qt"), QString::fromLatin1(qVersion())});
    for (const auto& [library, version] : app::libraryVersions())
        rows.append({QString::fromStdString(library), QString::fromStdString(version)});
    return rows;
}

AboutDialog::AboutDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("About trainbench"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("<b>trainbench</b><br>Trains real models, profiles every step and tells you "
                                "whether a run is bound by input, compute, memory or communication, and what "
                                "to change. Runs are recorded in a SQLite run store."));
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    for (const auto& [name, version] : versions()) {
        auto* value = new QLabel(version);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        form->addRow(name + QLatin1Char(':'), value);
    }
    layout->addLayout(form);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

}  // namespace trainbench::ui
