// trainbench-cli estimate --inference: a forward pass of the experiment's model on every fixed-figure
// device of the catalog, at each batch size and inference precision, from the op graph alone: latency
// of one batch, examples/s, cost per million predictions, or why it cannot run (docs/devices.md).
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/texttable.h"
#include "app/experiment/experimenterror.h"
#include "app/experiment/sweep.h"
#include "app/run/estimate.h"
#include "app/run/exitcodes.h"
#include "engine/emulation/devicecatalog.h"
#include "engine/emulation/inferenceestimate.h"
#include "engine/emulation/opgraph.h"
#include "profiler/format/numberformat.h"

namespace trainbench::cli {

namespace {

// Edge devices cost a small fraction of a cent per million predictions: keep three digits of those.
std::string usd(double value) { return value >= 1e-4 || value == 0.0 ? fmt("$%.4f", value) : fmt("$%.2e", value); }

// "rpi4-4gb: bought, $55.00 over 3 years + 3 W at $0.160/kWh = $0.00257 per hour"
std::string ownershipLine(const engine::DeviceSpec& device) {
    const engine::OwnershipCost& o = *device.ownership;
    char line[256];
    std::snprintf(line, sizeof line, "%s: bought, $%.2f over %g years + %g W at $%.3f/kWh = $%.5f per hour",
                  device.id.c_str(), o.purchase_usd, o.service_life_years, o.power_w, o.usd_per_kwh,
                  device.price_per_hour);
    return line;
}

}  // namespace

int inferenceEstimateCommand(const std::string& file, const std::vector<std::string>& overrides,
                             const std::vector<int64_t>& batches, const std::vector<std::string>& precisionNames,
                             bool asJson, std::optional<double> serviceYears, std::optional<double> usdPerKwh) {
    std::vector<engine::Precision> precisions;
    try {
        for (const std::string& name : precisionNames) precisions.push_back(engine::parseInferencePrecision(name));
        for (int64_t b : batches)
            if (b <= 0) throw std::invalid_argument("--batch: a batch size must be positive, got " + std::to_string(b));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "estimate --inference: %s\n", e.what());
        return kExitUsage;
    }
    std::vector<app::SweepPoint> points;
    try {
        points = app::loadSweepFile(file, overrides);
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    }
    try {
        // The model of the first point: a sweep varies training settings, the served model is one.
        const app::Experiment& x = points.front().experiment;
        const app::DataShape data = app::dataShapeOf(x);
        TextTable table(
            {"device", "precision", "batch", "latency", "examples/s", "$/1M predictions", "memory", "fit"});
        nlohmann::json out = nlohmann::json::array();
        std::vector<std::string> skipped, owned, notes;  // printed under the table
        for (const engine::DeviceSpec& listed : engine::DeviceCatalog::builtin().devices()) {
            if (listed.needs_calibration) {
                skipped.push_back(listed.id);
                continue;
            }
            // A bought device has no hourly price: its purchase over its life plus its power (ownershipcost.h).
            const engine::DeviceSpec device =
                listed.ownership ? listed.withOwnershipCost(serviceYears, usdPerKwh) : listed;
            if (device.ownership) owned.push_back(ownershipLine(device));
            for (engine::Precision precision : precisions)
                for (int64_t batch : batches) {
                    const engine::OpGraph graph = engine::evaluationGraph(x.model, data.sample, data.classes, batch);
                    const engine::InferenceEstimate e = engine::estimateInference(graph, device, precision);
                    const std::string memory = fmt("%.1f MiB", e.memory_bytes / 1048576.0);
                    const std::string fit = !e.fits ? "no"
                                            : e.streamed_bytes > 0.0
                                                ? fmt("streams %.1f MiB", e.streamed_bytes / 1048576.0)
                                                : "yes";
                    if (e.fits)
                        table.add({device.replicaLabel(), engine::precisionName(precision), std::to_string(batch),
                                   profiler::formatDuration(e.seconds), fmt("%.0f", e.examples_per_s),
                                   usd(e.usd_per_million), memory, fit});
                    else
                        table.add({device.replicaLabel(), engine::precisionName(precision), std::to_string(batch), "-",
                                   "-", "-", memory + " (cannot run)", fit});
                    if (!e.note.empty() && batch == batches.front())
                        notes.push_back(device.replicaLabel() + " " + engine::precisionName(precision) + ": " + e.note);
                    out.push_back({{"device", device.id},
                                   {"replica", device.replicaLabel()},
                                   {"precision", engine::precisionName(precision)},
                                   {"batch", batch},
                                   {"fits", e.fits},
                                   {"why_not", e.why_not},
                                   {"weight_bytes", e.weight_bytes},
                                   {"memory_bytes", e.memory_bytes},
                                   {"latency_seconds", e.seconds},
                                   {"examples_per_second", e.examples_per_s},
                                   {"usd_per_million", e.usd_per_million},
                                   {"streamed_bytes", e.streamed_bytes},
                                   {"stream_seconds", e.stream_seconds},
                                   {"note", e.note},
                                   {"price_per_hour", device.replicaPricePerHour()}});
                    if (!e.fits && !asJson && batch == batches.front())
                        std::fprintf(stderr, "%s %s: %s\n", device.replicaLabel().c_str(),
                                     engine::precisionName(precision), e.why_not.c_str());
                }
        }
        if (asJson) {
            std::printf("%s\n", out.dump(2).c_str());
            return kExitOk;
        }
        std::printf("inference estimate of %s: the model's forward pass on one replica of each catalog device "
                    "(from the op graph, without numerics)\n\n",
                    file.c_str());
        table.print(stdout);
        std::printf("\nlatency: one batch, per-op and per-step overheads included; $/1M predictions: the replica's "
                    "catalog price per hour x latency / batch x 1e6; memory: weights + activations at the "
                    "precision; fit: no, yes, or what an accelerator streams from its host per batch.\n");
        for (const std::string& line : notes) std::printf("%s\n", line.c_str());
        for (const std::string& line : owned) std::printf("%s\n", line.c_str());
        for (const std::string& id : skipped)
            std::printf("%s: not estimated (its figures come from a calibration; measure it with loadtest)\n",
                        id.c_str());
        return kExitOk;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "estimate --inference: %s\n", e.what());
        return kExitUsage;
    }
}

}  // namespace trainbench::cli
