// trainbench-cli estimate: a dry run of an experiment (and every point of its sweep) on its emulated
// devices, from the op graph alone: one row per point with step time, throughput, scaling against
// the first point, memory per replica, the whole run's time and cost.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/cli/texttable.h"
#include "app/experiment/experimenterror.h"
#include "app/experiment/sweep.h"
#include "app/run/estimate.h"
#include "profiler/format/numberformat.h"

namespace trainbench::cli {

namespace {

std::string gib(double bytes) { return fmt("%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace

int estimateCommand(const std::string& file, const std::vector<std::string>& overrides, bool asJson,
                    const std::string& db) {
    std::vector<app::SweepPoint> points;
    try {
        points = app::loadSweepFile(file, overrides);
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    }
    try {
        const app::DataShape data = app::dataShapeOf(points.front().experiment);
        TextTable table({"point", "devices", "batch/replica", "step", "samples/s", "scaling", "memory/replica",
                         "MXU/TC use", "steps", "time", "cost"});
        nlohmann::json out = nlohmann::json::array();
        double firstPerReplica = 0.0;
        bool anyTooBig = false;
        for (const app::SweepPoint& p : points) {
            const app::Estimate e = app::estimateExperiment(p.experiment, data, app::storeCalibrator(db), db);
            const double perReplica = e.samples_per_second / e.replicas;
            if (firstPerReplica == 0.0) firstPerReplica = perReplica;
            const double scaling = perReplica / firstPerReplica;  // 1 = linear in replicas
            anyTooBig = anyTooBig || !e.memory.fits;
            table.add({p.name, e.devices + " (" + std::to_string(e.replicas) + ")", std::to_string(e.replica_batch),
                       profiler::formatDuration(e.step.seconds()), fmt("%.0f", e.samples_per_second), fmt("%.0f %%", scaling * 100),
                       gib(e.memory.needed_bytes) + fmt(" (%.0f %%)", e.memory.fraction * 100) +
                           (e.memory.fits ? "" : " OOM"),
                       e.matrix_units ? fmt("%.0f %%", e.step.matrix_utilisation * 100) : "-", std::to_string(e.steps),
                       profiler::formatDuration(e.train_seconds), e.cost ? fmt("$%.2f", *e.cost) : "-"});
            out.push_back({{"point", p.name},
                           {"devices", e.devices},
                           {"replicas", e.replicas},
                           {"device_count", e.device_count},
                           {"global_batch", e.global_batch},
                           {"replica_batch", e.replica_batch},
                           {"step_seconds", e.step.seconds()},
                           {"forward_seconds", e.step.forward_s},
                           {"backward_seconds", e.step.backward_s},
                           {"optimizer_seconds", e.step.optimizer_s},
                           {"comm_seconds", e.step.comm_s},
                           {"exposed_comm_seconds", e.step.exposed_comm_s},
                           {"overhead_seconds", e.step.overhead_s},
                           {"input_seconds", e.step.input_s},
                           {"samples_per_second", e.samples_per_second},
                           {"scaling_efficiency", scaling},
                           {"matrix_utilisation", e.step.matrix_utilisation},
                           {"memory_bytes", e.memory.needed_bytes},
                           {"memory_fraction", e.memory.fraction},
                           {"fits", e.memory.fits},
                           {"splits", app::splitsJson(e.splits)},
                           {"steps", e.steps},
                           {"train_seconds", e.train_seconds},
                           {"price_per_device_hour", e.price_per_device_hour ? nlohmann::json(*e.price_per_device_hour) : nlohmann::json()},
                           {"cost", e.cost ? nlohmann::json(*e.cost) : nlohmann::json()}});
            if (e.parameter_servers) {
                const engine::ParameterServerStep& ps = *e.parameter_servers;
                out.back()["worker_step_seconds"] = ps.worker_s;
                out.back()["round_seconds"] = ps.round_s;
                out.back()["ps_queue_seconds"] = ps.queue_s;
                out.back()["ps_bound"] = engine::psBoundName(ps.bound);
                if (!asJson && ps.bound != engine::PsBound::Workers)
                    std::fprintf(stderr, "%s: the parameter servers are the bottleneck (%s): a round of %d steps takes "
                                         "%s, a worker's step %s\n", p.name.c_str(), engine::psBoundName(ps.bound).c_str(),
                                 ps.workers, profiler::formatDuration(ps.round_s).c_str(), profiler::formatDuration(ps.worker_s).c_str());
            }
            if (!e.memory.message.empty() && !asJson)
                std::fprintf(stderr, "%s: %s%s\n", p.name.c_str(), e.memory.message.c_str(), app::splitAdvice(e.splits).c_str());
        }
        if (asJson) {
            std::printf("%s\n", out.dump(2).c_str());
        } else {
            std::printf("estimate of %s: %lld training examples of %s, %lld classes (from the op graph, "
                        "without numerics)\n\n",
                        file.c_str(), static_cast<long long>(data.train_examples),
                        [&] {
                            std::string s;
                            for (size_t i = 0; i < data.sample.size(); ++i)
                                s += (i ? "x" : "") + std::to_string(data.sample[i]);
                            return s;
                        }().c_str(),
                        static_cast<long long>(data.classes));
            table.print(stdout);
            std::printf("\nscaling: samples/s per replica against the first point; time: training steps only "
                        "(evaluations not counted); cost: devices charged x catalog price x time.\n");
        }
        return anyTooBig ? kExitRunFailed : kExitOk;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "estimate: %s\n", e.what());
        return kExitUsage;
    }
}

}  // namespace trainbench::cli
