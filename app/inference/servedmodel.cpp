#include "app/inference/servedmodel.h"

#include <stdexcept>
#include <utility>

#include "app/inference/calibrationset.h"
#include "app/inference/graphservable.h"
#include "engine/inference/calibration.h"
#include "engine/inference/quantizedgraph.h"

namespace trainbench::app {

ServedModel openServedModel(const std::string& model, const std::string& db, const ServedModelOptions& options) {
    if (options.precision != "fp32" && options.precision != "int8")
        throw std::invalid_argument("precision '" + options.precision + "': expected fp32 or int8");
    ServedModel m{openModel(model, db), {}, options.precision, 0, 0, {}};
    GraphServableOptions g;
    g.name = options.name.empty() ? m.source.name : options.name;
    g.threads_per_instance = options.threads_per_instance;
    g.max_batch = options.max_batch;
    m.fp32_weight_bytes = engine::inference::fp32WeightBytes(m.source.graph);
    if (options.precision == "fp32") {
        m.servable = graphServable(m.source.graph, g);
        m.weight_bytes = m.fp32_weight_bytes;
        return m;
    }
    if (options.calibration_batches < 1)
        throw std::invalid_argument("calibration batches must be at least 1, got " +
                                    std::to_string(options.calibration_batches));
    engine::inference::CalibrationOptions c;
    c.batches = options.calibration_batches;
    c.batch_size = kCalibrationBatchSize;
    c.seed = options.calibration_seed;
    const int64_t count = c.batches * c.batch_size;
    const std::vector<float> x = calibrationExamples(m.source, count, c.seed);
    const engine::inference::QuantizedGraph q = engine::inference::quantizeGraph(m.source.graph, x.data(), count, c);
    m.weight_bytes = q.weightBytes();
    const engine::inference::CalibrationRecord& r = q.calibration;
    m.calibration = std::to_string(r.batches) + " batches x " + std::to_string(r.batch_size) + " training examples, " +
                    r.method + ", seed " + std::to_string(r.seed) + ", u8 levels " + std::to_string(r.u8_levels);
    m.servable = int8Servable(q, g);
    return m;
}

}  // namespace trainbench::app
