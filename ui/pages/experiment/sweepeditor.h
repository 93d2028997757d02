#pragma once
// The sweep section in the form: rows of (key path, comma-separated values), e.g. strategy.replicas
// with "1, 2, 4", making {"sweep": {"strategy.replicas": [1, 2, 4]}}; below them the number of points
// and their names, as `trainbench-cli run` will name the runs. Key paths come from the schema's keys
// that can be swept (app::sweepableKeys), so the chooser follows the schema.
#include <optional>
#include <vector>

#include <QWidget>

#include <nlohmann/json.hpp>

#include "app/experiment/experimenterror.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QVBoxLayout;

namespace trainbench::ui {

class SweepEditor : public QWidget {
    Q_OBJECT
public:
    // schema: app::experimentSchemaJson(), for each key's type and description.
    explicit SweepEditor(nlohmann::json schema, QWidget* parent = nullptr);

    // The section, rows in order; null when there are no rows (the file gets no sweep).
    nlohmann::ordered_json toJson() const;
    // Shows a document's sweep section (null: none). Emits nothing.
    void setJson(const nlohmann::ordered_json& sweep);

    int rowCount() const { return static_cast<int>(rows_.size()); }
    void addRow(const QString& keyPath = {}, const QString& values = {});  // emits edited()
    void removeRow(int row);                                               // emits edited()
    QComboBox* keyBox(int row) const { return rows_.at(static_cast<std::size_t>(row)).key; }
    QLineEdit* valuesEdit(int row) const { return rows_.at(static_cast<std::size_t>(row)).values; }
    QListWidget* pointList() const { return points_; }
    QLabel* countLabel() const { return count_; }

    // The points' names from the last validation; nullopt when the experiment has issues.
    void setPoints(const std::optional<QStringList>& names);
    // Issues under "sweep" ("sweep.strategy.replicas[2]"), shown under their row.
    void setIssues(const std::vector<app::ExperimentIssue>& issues);

    // "1, 2, 4" -> [1, 2, 4]; text keys take words as text ("adam, sgd"); "\"a, b\"" is one value.
    static nlohmann::ordered_json parseValues(const QString& text, bool textKey);
    static QString valuesText(const nlohmann::ordered_json& values, bool textKey);

signals:
    void edited();

private:
    struct Row {
        QWidget* widget;
        QComboBox* key;
        QLineEdit* values;
        QLabel* issue;
    };
    bool isTextKey(const QString& keyPath) const;
    void updateCount();
    void userEdited();

    nlohmann::json schema_;
    QStringList keys_;
    std::vector<Row> rows_;
    std::optional<nlohmann::ordered_json> foreign_;  // a section the rows cannot show, kept as loaded
    QVBoxLayout* rowsLayout_;
    QLabel* count_;
    QLabel* issue_;  // about the whole section ("has more than 1000 points")
    QListWidget* points_;
    std::optional<QStringList> names_;
};

}  // namespace trainbench::ui
