#include "app/plan/servingtargets.h"

#include <limits>
#include <map>
#include <memory>

#include "app/run/estimate.h"
#include "engine/emulation/inferenceestimate.h"
#include "engine/emulation/opgraph.h"

namespace trainbench::app {

std::vector<ServingTarget> emulatedServingTargets(const Experiment& x, const engine::DeviceCatalog& catalog,
                                                  const std::vector<engine::Precision>& precisions) {
    const DataShape data = dataShapeOf(x);
    std::vector<ServingTarget> out;
    for (const engine::DeviceSpec& device : catalog.devices()) {
        if (device.needs_calibration) continue;
        for (engine::Precision precision : precisions) {
            ServingTarget t;
            t.device = device.id;
            t.label = device.replicaLabel();
            t.precision = precision;
            t.price_per_hour = device.replicaPricePerHour();
            auto cache = std::make_shared<std::map<int64_t, double>>();
            t.batchSeconds = [cache, model = x.model, data, device, precision](int64_t n) {
                if (auto it = cache->find(n); it != cache->end()) return it->second;
                const engine::InferenceEstimate e =
                    engine::estimateInference(engine::evaluationGraph(model, data.sample, data.classes, n), device, precision);
                const double s = e.fits ? e.seconds : std::numeric_limits<double>::infinity();
                cache->emplace(n, s);
                return s;
            };
            const engine::InferenceEstimate one =
                engine::estimateInference(engine::evaluationGraph(x.model, data.sample, data.classes, 1), device, precision);
            if (!one.fits) t.why_not = one.why_not;
            else if (!(t.price_per_hour > 0)) t.why_not = "the catalog gives it no price";
            out.push_back(std::move(t));
        }
    }
    return out;
}

}  // namespace trainbench::app
