#pragma once
// Plan page, Layouts tab: how to split a transformer over N GPUs, as `trainbench-cli plan-layouts`
// answers it. The user picks a model (a description file or an ONNX graph), a GPU of the catalog,
// the GPU count, the global batch and the order; the search (app::layoutPlanReport) runs off the GUI
// thread and the tab shows the layouts that fit, ranked, with Calculon's per-layout figures in a
// table, the best layouts' step time by part as stacked bars, and every rejected layout with why.
#include <QWidget>

#include <memory>

#include "app/plan/layoutplan.h"
#include "ui/jobs/jobtracker.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;
class QTreeWidget;

namespace trainbench::ui {

class LayoutTableModel;
class StackedBars;

// What one search was asked and what it found (or why it could not run).
struct LayoutPlanResult {
    std::shared_ptr<const app::LayoutPlanReport> plan;  // null when it failed
    QString error;
    double seconds = 0.0;  // how long the search took
};

class LayoutsView : public QWidget {
    Q_OBJECT
public:
    explicit LayoutsView(QWidget* parent = nullptr);

    void setModelFile(const QString& path);
    void setDevice(const QString& id);  // a GPU of the catalog
    void setDeviceCount(int count);
    void setGlobalBatch(qint64 batch);  // 0: the model file's
    void setByCost(bool byCost);
    void setExhaustive(bool on);
    // Searches with the current inputs (off the GUI thread); resultReady() follows.
    void plan();
    // The same search, here and now (the worker's job; tests).
    static LayoutPlanResult search(const app::LayoutPlanOptions& options);

    bool busy() const { return !jobs_.idle(); }
    const LayoutPlanResult& result() const { return result_; }
    LayoutTableModel* tableModel() const { return model_; }
    StackedBars* stepBars() const { return bars_; }
    QTreeWidget* rejectedList() const { return rejected_; }
    QString summaryText() const;
    QString problemText() const;
    // The GPUs offered: the catalog's GPUs with NVLink figures.
    QStringList devices() const;

    // Layouts shown in the table and as bars.
    static constexpr int kTableRows = 25;
    static constexpr int kBars = 8;

signals:
    void resultReady();

private:
    app::LayoutPlanOptions options() const;
    void display(const LayoutPlanResult& result);
    void chooseModel();

    QLineEdit* modelFile_ = nullptr;
    QComboBox* device_ = nullptr;
    QSpinBox* count_ = nullptr;
    QSpinBox* batch_ = nullptr;
    QComboBox* order_ = nullptr;
    QCheckBox* exhaustive_ = nullptr;
    QPushButton* planButton_ = nullptr;
    QLabel* problem_ = nullptr;
    QLabel* summary_ = nullptr;
    LayoutTableModel* model_ = nullptr;
    QTableView* table_ = nullptr;
    StackedBars* bars_ = nullptr;
    QTreeWidget* rejected_ = nullptr;
    LayoutPlanResult result_;
    JobTracker jobs_;
};

}  // namespace trainbench::ui
