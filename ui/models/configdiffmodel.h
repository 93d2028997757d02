#pragma once
// Compare page: the runs' resolved experiments side by side, one row per key path
// ("train.batch_size"), one column per run; rows whose values differ are marked, and the model can
// hold only those ("differences only").
#include <QAbstractTableModel>
#include <QStringList>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainbench::ui {

class ConfigDiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role { DiffersRole = Qt::UserRole + 1 };

    explicit ConfigDiffModel(QObject* parent = nullptr);

    // One config per run (the runs' config_json), with the column titles.
    void setConfigs(const QStringList& titles, const std::vector<std::string>& configJson);
    void setDifferencesOnly(bool on);
    bool differencesOnly() const { return differencesOnly_; }
    // Key paths shown, in order (tests).
    QStringList keys() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        std::string key;
        std::vector<std::string> values;  // per run; "" where the run has no such key
        bool differs = false;
    };
    void rebuild();

    QStringList titles_;
    std::vector<Row> all_;
    std::vector<const Row*> shown_;
    bool differencesOnly_ = true;
};

}  // namespace trainbench::ui
