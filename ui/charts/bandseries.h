#pragma once
// A group of series drawn as one: the mean line with a min–max band, e.g. the seeds of one
// configuration. aggregateBand() does the arithmetic; call it off the GUI thread for big groups.
#include "ui/charts/series.h"

namespace trainbench::ui {

struct BandSeries {
    QString name;
    PointsPtr mean;   // on the common x grid, sorted by x
    PointsPtr lower;  // minimum over the members at each x
    PointsPtr upper;  // maximum over the members at each x
    int members = 0;  // how many series were aggregated
};

// Aggregates `members` onto the union of their x values: at each x, every member whose x-span
// covers it contributes its value there (linear interpolation between its two neighbours); NaN y
// are skipped. A point is kept when at least one member covers it.
BandSeries aggregateBand(QString name, const std::vector<Series>& members);

}  // namespace trainbench::ui
