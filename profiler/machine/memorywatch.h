#pragma once
// Watches the process's memory over a stretch of a run (training): the peak resident set within it,
// and the swapping and major page faults that happened meanwhile, the evidence that a run outgrew
// the machine's memory.
#include <cstdint>

#include "profiler/machine/machineinfo.h"

namespace trainbench::profiler {

class MemoryWatch {
public:
    // Starts watching: takes the swap and fault counts and resets the process's peak resident set,
    // so what came before (a calibration's arrays, a dataset already freed) does not count.
    MemoryWatch();

    // Peak resident set since the start, bytes (since the process started if the kernel refused
    // the reset; see peakCoversWatch()).
    int64_t peakRssBytes() const;
    bool peakCoversWatch() const { return peakReset_; }
    // Pages swapped in or out since the start, system-wide (other processes' swapping counts too:
    // it takes the same memory away).
    int64_t swappedPages() const;
    // This process's major page faults since the start.
    int64_t majorFaults() const;

    // Sets footprint's peak_rss_bytes, swapped_pages and major_faults from the above.
    void fill(MemoryFootprint& footprint) const;

private:
    int64_t swapAtStart_ = 0;
    int64_t faultsAtStart_ = 0;
    bool peakReset_ = false;
};

}  // namespace trainbench::profiler
