#include "ui/charts/plotmapping.h"

#include "ui/charts/downsample.h"

#include <cmath>

namespace trainbench::ui {
namespace {

double yScale(double y, bool log) { return log ? std::log10(y) : y; }

}  // namespace

QPointF PlotMapping::toPixel(const QPointF& value) const {
    const double fx = (value.x() - xMin) / (xMax - xMin);
    const double y0 = yScale(yMin, logY), y1 = yScale(yMax, logY);
    const double fy = (yScale(value.y(), logY) - y0) / (y1 - y0);
    return {plot.left() + fx * plot.width(), plot.bottom() - fy * plot.height()};
}

double PlotMapping::xAt(double pixelX) const {
    return xMin + (pixelX - plot.left()) / plot.width() * (xMax - xMin);
}

std::optional<NearestHit> nearestPoint(std::span<const QPointF> points, const PlotMapping& mapping, const QPointF& pixel,
                                       double radius) {
    if (points.empty() || mapping.plot.width() <= 0 || mapping.xMax <= mapping.xMin) return std::nullopt;
    const IndexRange range = visibleRange(points, mapping.xAt(pixel.x() - radius), mapping.xAt(pixel.x() + radius));
    std::optional<NearestHit> best;
    for (size_t i = range.begin; i < range.end; ++i) {
        const QPointF& p = points[i];
        if (!std::isfinite(p.y()) || (mapping.logY && p.y() <= 0)) continue;
        const QPointF at = mapping.toPixel(p);
        const double d = std::hypot(at.x() - pixel.x(), at.y() - pixel.y());
        if (d <= radius && (!best || d < best->distance)) best = NearestHit{i, d};
    }
    return best;
}

}  // namespace trainbench::ui
