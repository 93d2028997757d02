#pragma once
// The infeed of runs on emulated devices — the host input pipeline's time per global batch — kept
// in the run store (table infeed_rates) per host, data section and batch: the first run measures
// it, later runs of the same pipeline reuse it, so their virtual-time curves do not depend on how
// busy the host is when they run (docs/devices.md, "The virtual clock of a run").
#include <functional>
#include <string>

namespace trainbench::profiler {

struct InfeedRate {
    double seconds_per_batch = 0.0;
    std::string measured_at;  // ISO-8601 UTC
    bool cached = false;      // read from the store, not measured now
};

// The stored rate of this host for `pipeline` (the data section, JSON) at `globalBatch`, or
// measure() saved to the store. A store this binary may only read gets a measurement that is not
// saved. Throws StoreError when the store cannot be opened.
InfeedRate infeedRateFor(const std::string& storePath, const std::string& pipeline, int64_t globalBatch,
                         const std::function<double()>& measure);

}  // namespace trainbench::profiler
