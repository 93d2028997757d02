#pragma once
// The Runs page's sorting and filtering over RunTableModel: numbers sort as numbers (SortRole), and
// a run shows when every word of the filter text appears in its name, status, strategy, devices or
// verdict, its status and kind are the ones chosen (if any). A group shows when any of its runs does.
#include <QSortFilterProxyModel>
#include <QStringList>

namespace trainbench::ui {

class RunFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit RunFilterModel(QObject* parent = nullptr);

    void setText(const QString& text);
    // Empty: every status.
    void setStatus(const QString& status);
    // Empty: every kind (train, predict, serve).
    void setKind(const QString& kind);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QStringList words_;
    QString status_;
    QString kind_;
};

}  // namespace trainbench::ui
