#pragma once
// The Plan page's two tabs show their answers alike: a red line for what is wrong with the inputs,
// a line summing up the answer, and a table of ranked rows.
class QAbstractItemModel;
class QLabel;
class QTableView;

namespace trainbench::ui::planwidgets {

QLabel* problemLabel();  // hidden until there is a problem
QLabel* summaryLabel();
QTableView* rankedTable(QAbstractItemModel* model);

}  // namespace trainbench::ui::planwidgets
