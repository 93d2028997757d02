#include "app/inference/servedmodel.h"

#include <stdexcept>
#include <utility>

#include "app/inference/calibrationset.h"
#include "app/inference/quantizemodel.h"
#include "engine/graph/graphpasses.h"
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
    // As served: batch norm folded (engine::graph::optimizeForInference), as quantize counts it too.
    m.fp32_weight_bytes = engine::inference::fp32WeightBytes(engine::graph::optimizeForInference(m.source.graph));
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
    m.calibration = calibrationText(q.calibration);
    m.servable = int8Servable(q, g);
    return m;
}

std::string calibrationText(const engine::inference::CalibrationRecord& r) {
    return std::to_string(r.batches) + " batches x " + std::to_string(r.batch_size) + " training examples, " + r.method +
           ", seed " + std::to_string(r.seed) + ", u8 levels " + std::to_string(r.u8_levels);
}

ServedModelQuality measureServedModel(const ModelSource& source, const ServedModelOptions& options, int threads) {
    const ModelRun& run = requireRun(source, "measuring the served model's accuracy (on its run's test set)");
    ServedModelQuality q;
    q.precision = options.precision;
    q.test_examples = run.data.test.count;
    if (options.precision == "fp32") {
        const engine::graph::Graph fp32 = engine::graph::optimizeForInference(source.graph);
        q.weight_bytes = q.fp32_weight_bytes = engine::inference::fp32WeightBytes(fp32);
        q.accuracy = q.fp32_accuracy = fp32Accuracy(source.graph, run.data.test, threads);
        return q;
    }
    if (options.precision != "int8")
        throw std::invalid_argument("precision must be fp32 or int8, got '" + options.precision + "'");
    engine::inference::CalibrationOptions c;
    c.batches = options.calibration_batches;
    c.batch_size = kCalibrationBatchSize;
    c.seed = options.calibration_seed;
    const QuantizedOutcome o = quantizeModel(source, c, threads);
    q.weight_bytes = o.record.int8_weight_bytes;
    q.fp32_weight_bytes = o.record.fp32_weight_bytes;
    q.accuracy = o.record.int8_accuracy.value_or(0.0);
    q.fp32_accuracy = o.record.fp32_accuracy.value_or(0.0);
    q.calibration = calibrationText(o.quantized.calibration);
    return q;
}

}  // namespace trainbench::app
