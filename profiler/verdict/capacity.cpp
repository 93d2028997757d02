// Memory capacity (rule 1 in rules.h): footprint against the device, and swapping.
#include "profiler/verdict/capacity.h"

#include <algorithm>
#include <string>

#include "profiler/verdict/evidencetext.h"
#include "profiler/verdict/rules.h"

namespace trainbench::profiler {

CapacityCheck checkCapacity(const std::optional<MemoryFootprint>& memory, double training_seconds) {
    CapacityCheck c;
    if (!memory) return c;
    const MemoryFootprint& m = *memory;
    // The process's major faults, not the system's swap counters: on a shared machine other
    // processes swap too, while this process faulting pages in from disk is this run's problem.
    c.faults_per_second = training_seconds > 0 ? static_cast<double>(m.major_faults) / training_seconds : 0.0;
    c.swapping = m.major_faults >= rules::kSwapMinFaults && c.faults_per_second >= rules::kSwapFaultsPerSecond;
    if (m.device_bytes > 0) {
        c.recorded = true;
        c.footprint_bytes = m.modelBytes();
        // RSS also holds the data set, the runtime and every replica of the process: a fair measure
        // of host RAM, not of an emulated device's memory.
        if (m.device_source == "host RAM" && m.peak_rss_bytes > c.footprint_bytes) {
            c.footprint_bytes = m.peak_rss_bytes;
            c.rss_counted = true;
        }
        c.fraction = c.footprint_bytes / m.device_bytes;
        c.near_full = rules::reaches(c.fraction, kCapacityFraction);
    }
    return c;
}

Finding capacityFinding(const CapacityCheck& c, const MemoryFootprint& m) {
    Finding f;
    f.kind = BoundKind::MemoryCapacity;
    f.severity = (c.swapping || rules::reaches(c.fraction, rules::kCapacityFull)) ? Severity::High : Severity::Moderate;
    const std::string device = text::megabytes(m.device_bytes) + " MB" +
                               (m.device_source.empty() ? std::string() : " (" + m.device_source + ")");
    const std::string swapping = "the run was swapping (" + std::to_string(m.major_faults) + " major page faults, " +
                                 text::fixed(c.faults_per_second) + " per second of training)";
    if (c.near_full)
        f.summary = "Memory capacity: the run needs " + text::percent(c.fraction) + " % of the device's " + device +
                    (c.swapping ? ", and " + swapping : std::string());
    else
        f.summary = "Memory capacity: " + swapping;
    if (c.recorded) {
        std::string what = "the run needs " + text::megabytes(c.footprint_bytes) + " MB";
        what += c.rss_counted ? " (peak resident set; by shapes " + text::megabytes(m.modelBytes()) + " MB)"
                              : " by shapes";
        what += ": " + text::percent(c.fraction) + " % of the device's " + device + " (>= 90 % is capacity-bound)";
        f.evidence.push_back(text::percentEvidence("footprint_fraction", c.fraction, what));
        f.evidence.push_back({"model_bytes", m.modelBytes() / 1e6, "MB",
                              "by shapes: parameters " + text::megabytes(m.params_bytes) + " MB, gradients " +
                                  text::megabytes(m.grads_bytes) + " MB, optimizer state " +
                                  text::megabytes(m.optimizer_bytes) + " MB, activations " +
                                  text::megabytes(m.activation_bytes) + " MB (one batch)"});
        if (m.peak_rss_bytes > 0)
            f.evidence.push_back({"peak_rss", m.peak_rss_bytes / 1e6, "MB",
                                  "peak resident set of the run process " + text::megabytes(m.peak_rss_bytes) + " MB"});
    }
    if (m.major_faults > 0)
        f.evidence.push_back({"major_faults", static_cast<double>(m.major_faults), "faults",
                              std::to_string(m.major_faults) + " major page faults of the run process while training (" +
                                  text::fixed(c.faults_per_second) + " per second; >= " +
                                  std::to_string(rules::kSwapMinFaults) + " and >= " +
                                  text::fixed(rules::kSwapFaultsPerSecond, 0) + "/s is swapping)"});
    if (m.swapped_pages > 0)
        f.evidence.push_back({"swapped_pages", static_cast<double>(m.swapped_pages), "pages",
                              std::to_string(m.swapped_pages) +
                                  " pages swapped system-wide while the run trained (other processes count too)"});
    return f;
}

std::optional<Evidence> unrelatedSwapEvidence(const CapacityCheck& c, const std::optional<MemoryFootprint>& memory) {
    if (!memory || memory->swapped_pages <= 0 || c.swapping) return std::nullopt;
    return Evidence{"swapped_pages", static_cast<double>(memory->swapped_pages), "pages",
                    std::to_string(memory->swapped_pages) + " pages swapped system-wide while the run trained, but the " +
                        "run's own major page faults (" + std::to_string(memory->major_faults) +
                        ") do not say it was swapping: other processes were"};
}

}  // namespace trainbench::profiler
