#pragma once
// Rule 1 of the classifier (rules.h): does the run's memory fit the device's, and did the run
// swap? Its numbers are per run, so the same answer holds for every window.
#include <cstdint>
#include <optional>

#include "profiler/machine/machineinfo.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

struct CapacityCheck {
    bool recorded = false;         // a footprint with a device size was recorded
    double footprint_bytes = 0.0;  // what is compared with the device
    bool rss_counted = false;      // peak RSS was larger than the model and counted (host RAM)
    double fraction = 0.0;         // footprint / device_bytes
    double faults_per_second = 0.0;
    bool near_full = false;        // fraction >= 90 %
    bool swapping = false;         // the process's major faults say it paged from swap
    bool bound() const { return near_full || swapping; }
};

// `training_seconds`: step, evaluation and checkpoint time of all steps (what the faults were
// counted over).
CapacityCheck checkCapacity(const std::optional<MemoryFootprint>& memory, double training_seconds);

// The capacity finding with its evidence; only when check.bound().
Finding capacityFinding(const CapacityCheck& check, const MemoryFootprint& memory);

// Swapped pages while the run's own faults stay low: other processes swapped (evidence only).
std::optional<Evidence> unrelatedSwapEvidence(const CapacityCheck& check, const std::optional<MemoryFootprint>& memory);

}  // namespace trainbench::profiler
