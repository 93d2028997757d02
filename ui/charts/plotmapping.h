#pragma once
// Value ↔ pixel arithmetic of a plot area, and the search for the original data point nearest
// the mouse: hit-testing a million points without asking Qt Charts to map each one.
#include <QPointF>
#include <QRectF>

#include <optional>
#include <span>

namespace trainbench::ui {

struct PlotMapping {
    QRectF plot;  // the plot area, in the coordinates of the pixel positions used below
    double xMin = 0, xMax = 1, yMin = 0, yMax = 1;
    bool logY = false;

    QPointF toPixel(const QPointF& value) const;
    double xAt(double pixelX) const;  // the x value at a horizontal pixel position
};

struct NearestHit {
    size_t index = 0;       // into the searched points
    double distance = 0.0;  // pixels
};

// The point of `points` (sorted by x) drawn nearest `pixel`, if one lies within `radius` pixels.
// Looks only at points whose x is within the radius: O(log n + points under the cursor).
std::optional<NearestHit> nearestPoint(std::span<const QPointF> points, const PlotMapping& mapping, const QPointF& pixel,
                                       double radius);

}  // namespace trainbench::ui
