#pragma once
// Help > About: what trainbench is, and the versions of Qt, oneDNN, SQLite and the other libraries
// this binary runs on (as they report themselves at run time).
#include <QDialog>

namespace trainbench::ui {

class AboutDialog : public QDialog {
    Q_OBJECT
public:
    explicit AboutDialog(QWidget* parent = nullptr);

    // The rows shown: {"Qt", "6.4.2"}, {"oneDNN", "2.6.3 (...)"}, ...
    static QList<QPair<QString, QString>> versions();
};

}  // namespace trainbench::ui
