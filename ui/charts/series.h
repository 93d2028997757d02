#pragma once
// The data a chart draws: a named series of (x, y) points sorted by x, shared immutably so a
// page's reader thread can hand a million points to the GUI thread without copying them.
#include <QPointF>
#include <QString>

#include <memory>
#include <span>
#include <vector>

namespace trainbench::ui {

using PointsPtr = std::shared_ptr<const std::vector<QPointF>>;

struct Series {
    QString name;
    PointsPtr points;  // sorted by x (ascending); a NaN y is a gap; never null after make()

    static Series make(QString name, std::vector<QPointF> points) {
        return {std::move(name), std::make_shared<const std::vector<QPointF>>(std::move(points))};
    }
    std::span<const QPointF> view() const {
        return points ? std::span<const QPointF>(*points) : std::span<const QPointF>();
    }
    size_t size() const { return points ? points->size() : 0; }
};

}  // namespace trainbench::ui
