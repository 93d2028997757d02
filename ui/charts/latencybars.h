#pragma once
// Horizontal bars of where a query's latency went (queue, batch, compute, serialise, network), in
// milliseconds: a load test's mean breakdown at one point. The parts the server did not time are
// left out; with none, the widget says so.
#include <QString>
#include <QWidget>

#include <optional>
#include <utility>
#include <vector>

namespace trainbench::ui {

class LatencyBars : public QWidget {
    Q_OBJECT
public:
    explicit LatencyBars(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    // (name, ms); a nullopt value is not drawn.
    void setParts(std::vector<std::pair<QString, std::optional<double>>> parts);
    const std::vector<std::pair<QString, double>>& parts() const { return parts_; }
    QSize sizeHint() const override { return {360, 200}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString title_;
    std::vector<std::pair<QString, double>> parts_;
};

}  // namespace trainbench::ui
