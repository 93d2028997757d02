#include "ui/pages/plan/planwidgets.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>

namespace trainbench::ui::planwidgets {

QLabel* problemLabel() {
    auto* label = new QLabel;
    label->setWordWrap(true);
    label->setStyleSheet(QStringLiteral("color: #c0392b;"));
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->hide();
    return label;
}

QLabel* summaryLabel() {
    auto* label = new QLabel;
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

QTableView* rankedTable(QAbstractItemModel* model) {
    auto* table = new QTableView;
    table->setModel(model);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setWordWrap(false);
    return table;
}

}  // namespace trainbench::ui::planwidgets
