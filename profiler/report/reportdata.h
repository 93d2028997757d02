#pragma once
// Everything a report shows, read from the run store once (collectReport) and then rendered to
// HTML, PDF, SVG, PNG or CSV without touching the store again. A plain value: it can be built on a
// reader thread and handed whole to the GUI thread.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/instrument/opstats.h"
#include "profiler/store/evalsample.h"
#include "profiler/store/loadtestpoint.h"
#include "profiler/machine/machineinfo.h"
#include "profiler/store/runrow.h"
#include "profiler/verdict/stepsample.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

// One run as the store records it.
struct RunReport {
    RunRow run;
    std::vector<StepSample> steps;          // in step order
    std::vector<EvalSample> evals;  // in the order they were recorded
    std::optional<Verdict> verdict;         // nullopt: the run was never classified
    std::vector<engine::prof::OpRow> ops;   // per-op statistics of the lowest rank that has them
    std::optional<MachineRoofs> roofs;      // the roofline of the run's host, if it was calibrated
    std::vector<std::pair<std::string, std::string>> attributes;  // run_attributes, sorted by key
    std::vector<LoadTestPoint> loadTestPoints;  // a load test's (kind "serve") points, in the order measured
};

struct ReportData {
    std::string storePath;       // the run store the runs came from
    std::string generatedAt;     // ISO-8601 UTC, when collectReport read them
    std::vector<RunReport> runs; // in the order they were asked for
};

}  // namespace trainbench::profiler
