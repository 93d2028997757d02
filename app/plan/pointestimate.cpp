#include "app/plan/pointestimate.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "app/run/deviceplan.h"
#include "app/run/estimate.h"
#include "profiler/grouping/configkeys.h"

namespace trainbench::app {

double PointEstimate::stepSeconds(double infeed) const {
    const double device = device_step_seconds.value_or(0.0);
    return infeed_prefetch ? std::max(device, infeed) : device + infeed;
}

std::vector<PointEstimate> estimatePoints(const std::vector<SweepPoint>& points) {
    std::vector<PointEstimate> out;
    std::map<std::string, DataShape> shapes;  // by data section: a sweep over devices reads it once
    for (const SweepPoint& p : points) {
        const Experiment& x = p.experiment;
        PointEstimate e;
        e.name = p.name;
        e.seed_key = profiler::seedGroupKey(x.resolved.dump());
        e.strategy = engine::strategyKindName(x.strategy.type);
        e.devices = x.device.type;
        if (!x.device.emulated()) {
            e.problem = "runs on this host's CPU (device.type 'cpu'): only emulated devices are projected; run it to measure";
            out.push_back(std::move(e));
            continue;
        }
        try {
            const std::string dataKey = x.resolved.value("data", nlohmann::json::object()).dump();
            auto it = shapes.find(dataKey);
            if (it == shapes.end()) it = shapes.emplace(dataKey, dataShapeOf(x)).first;
            const Estimate est = estimateExperiment(x, it->second);
            e.devices = est.devices;
            e.run_steps = est.steps;
            e.numerics_key = profiler::numericsKey(x.resolved.dump(), est.global_batch);
            if (!est.memory.fits) {
                e.problem = "does not fit: " + est.memory.message;
            } else {
                e.device_step_seconds = est.step.seconds() - est.step.input_s;
                if (x.device.infeed_seconds_per_batch > 0) e.infeed_seconds = x.device.infeed_seconds_per_batch;
                e.infeed_prefetch = virtualClockConfig(planDevices(x), x, 0.0).infeed_prefetch;
                if (est.price_per_device_hour)
                    e.price_per_second = static_cast<double>(est.device_count) * *est.price_per_device_hour / 3600.0;
            }
        } catch (const std::invalid_argument& error) {
            e.problem = error.what();
        }
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace trainbench::app
