#include "profiler/machine/memorywatch.h"

#include <algorithm>

#include "profiler/machine/memoryprobe.h"

namespace trainbench::profiler {

MemoryWatch::MemoryWatch()
    : swapAtStart_(swapPages()), faultsAtStart_(profiler::majorFaults()), peakReset_(resetPeakRss()) {}

int64_t MemoryWatch::peakRssBytes() const { return profiler::peakRssBytes(); }

// Counters only grow, but clamp anyway: a negative count of swapped pages would read as nonsense.
int64_t MemoryWatch::swappedPages() const { return std::max<int64_t>(0, swapPages() - swapAtStart_); }

int64_t MemoryWatch::majorFaults() const {
    return std::max<int64_t>(0, profiler::majorFaults() - faultsAtStart_);
}

void MemoryWatch::fill(MemoryFootprint& footprint) const {
    footprint.peak_rss_bytes = static_cast<double>(peakRssBytes());
    footprint.swapped_pages = swappedPages();
    footprint.major_faults = majorFaults();
}

}  // namespace trainbench::profiler
