#include "ui/pages/experiment/textfield.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMenu>
#include <QToolButton>

namespace trainbench::ui {

using nlohmann::json;

TextField::TextField(const QString& keyPath, const json& schema, QWidget* parent) : FieldWidget(keyPath, schema, parent) {
    edit_ = new QLineEdit(this);
    edit_->setMinimumWidth(110);
    connect(edit_, &QLineEdit::textEdited, this, &TextField::userEdited);
    if (schema.value("type", "") != "path") {
        setEditor(edit_);
        return;
    }
    auto* row = new QWidget(this);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(edit_, 1);
    auto* pick = new QToolButton(row);
    pick->setText(QStringLiteral("\u2026"));
    pick->setToolTip(tr("Choose a file or a folder for %1").arg(keyPath));
    pick->setPopupMode(QToolButton::InstantPopup);
    pick->setStyleSheet(QStringLiteral("QToolButton::menu-indicator { image: none; width: 0px; }"));
    auto* menu = new QMenu(pick);
    menu->addAction(tr("Choose a file\u2026"), this, [this] { browse(false); });
    menu->addAction(tr("Choose a folder\u2026"), this, [this] { browse(true); });
    pick->setMenu(menu);
    layout->addWidget(pick);
    setEditor(row);
    setFocusProxy(edit_);
}

void TextField::browse(bool folder) {
    const QString start = edit_->text().isEmpty() ? edit_->placeholderText() : edit_->text();
    const QString chosen = folder ? QFileDialog::getExistingDirectory(this, keyPath(), start)
                                  : QFileDialog::getOpenFileName(this, keyPath(), start);
    if (chosen.isEmpty()) return;
    edit_->setText(chosen);
    userEdited();
}

bool TextField::hasInput() const { return !edit_->text().isEmpty(); }

json TextField::inputValue() const { return edit_->text().toStdString(); }

bool TextField::showValue(const json& v) {
    if (!v.is_string()) return false;
    edit_->setText(QString::fromStdString(v.get<std::string>()));
    edit_->setCursorPosition(0);  // a long path or description shows its start
    return true;
}

void TextField::clearInput() { edit_->clear(); }

void TextField::showPlaceholder(const QString& text) { edit_->setPlaceholderText(text); }

}  // namespace trainbench::ui
