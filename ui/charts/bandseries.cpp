#include "ui/charts/bandseries.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainbench::ui {
namespace {

std::vector<QPointF> finitePoints(const Series& s) {
    std::vector<QPointF> out;
    out.reserve(s.size());
    for (const QPointF& p : s.view())
        if (std::isfinite(p.x()) && std::isfinite(p.y())) out.push_back(p);
    return out;
}

}  // namespace

BandSeries aggregateBand(QString name, const std::vector<Series>& members) {
    std::vector<std::vector<QPointF>> clean;
    clean.reserve(members.size());
    std::vector<double> grid;
    for (const Series& s : members) {
        clean.push_back(finitePoints(s));
        for (const QPointF& p : clean.back()) grid.push_back(p.x());
    }
    std::sort(grid.begin(), grid.end());
    grid.erase(std::unique(grid.begin(), grid.end()), grid.end());

    std::vector<QPointF> mean, lower, upper;
    mean.reserve(grid.size());
    lower.reserve(grid.size());
    upper.reserve(grid.size());
    // One cursor per member walks the grid once: O(grid * members + total points).
    std::vector<size_t> cursor(clean.size(), 0);
    for (double x : grid) {
        double sum = 0.0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
        int count = 0;
        for (size_t m = 0; m < clean.size(); ++m) {
            const std::vector<QPointF>& pts = clean[m];
            if (pts.empty() || x < pts.front().x() || x > pts.back().x()) continue;
            size_t& i = cursor[m];
            while (i + 1 < pts.size() && pts[i + 1].x() <= x) ++i;
            double y = pts[i].y();
            if (pts[i].x() < x && i + 1 < pts.size()) {
                const QPointF& a = pts[i];
                const QPointF& b = pts[i + 1];
                y = a.y() + (b.y() - a.y()) * (x - a.x()) / (b.x() - a.x());
            }
            sum += y;
            lo = std::min(lo, y);
            hi = std::max(hi, y);
            ++count;
        }
        if (count == 0) continue;
        mean.emplace_back(x, sum / count);
        lower.emplace_back(x, lo);
        upper.emplace_back(x, hi);
    }
    return {std::move(name), std::make_shared<const std::vector<QPointF>>(std::move(mean)),
            std::make_shared<const std::vector<QPointF>>(std::move(lower)),
            std::make_shared<const std::vector<QPointF>>(std::move(upper)), int(members.size())};
}

}  // namespace trainbench::ui
