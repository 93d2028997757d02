#include "app/predict/predictrun.h"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <utility>

#include "app/experiment/experiment.h"
#include "app/inference/modelsource.h"
#include "app/predict/predictionwriter.h"
#include "app/run/deviceplan.h"
#include "app/run/runprofiler.h"
#include "engine/data/pipeline/predictioninput.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/train/traininput.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The run's experiment with the prediction's data: --set may change data.* only (the model is the
// checkpoint's, training settings mean nothing here).
Experiment predictionExperiment(const ModelSource& m, const std::vector<std::string>& overrides) {
    for (const std::string& o : overrides)
        if (o.rfind("data.", 0) != 0)
            throw std::invalid_argument("--set " + o + ": a prediction takes data.* keys only (the model is run " +
                                        std::to_string(m.run.value) + "'s checkpoint)");
    return parseExperiment(m.experiment.resolved.dump(), m.experiment.source_path, overrides);
}

profiler::RunSpec specFor(const PredictRequest& r, const ModelSource& m, const Experiment& x, const DevicePlan& d,
                          int threads) {
    profiler::RunSpec spec;
    spec.name = !r.name.empty() ? r.name : "predict-" + m.experiment.name;
    spec.config_json = x.resolved.dump();
    spec.strategy = "single";
    spec.devices = "cpu";
    spec.global_batch = r.batch_size;
    spec.threads = threads;
    spec.dataset = x.data.dataset;
    spec.model = x.model.preset.empty() ? "custom(" + std::to_string(x.model.layers.size()) + " layers)" : x.model.preset;
    if (!d.spec.id.empty()) spec.device_type = d.spec.id;
    spec.device_count = 1;
    spec.price_per_device_hour = d.price_per_device_hour;
    spec.param_count = m.graph.parameterCount();
    return spec;
}

}  // namespace

PredictOutcome runPrediction(const PredictRequest& r) {
    auto say = [&](const std::string& line) {
        if (r.log) r.log(line);
    };
    if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be at least 1");
    ModelSource m = openModel(r.model, r.db);
    const Experiment x = predictionExperiment(m, r.overrides);
    // The pipeline scales pixels as training did; the graph then takes its input as it comes.
    engine::graph::Graph graph = engine::graph::optimizeForInference(m.graph);
    graph.metadata.input_scale = 1.0f;
    graph.metadata.input_shift = 0.0f;
    engine::PredictionInput input = engine::openPredictionInput(x.data, r.split, r.batch_size, graph.classes, r.log);
    const engine::graph::Dims shape{input.channels, input.height, input.width};
    if (shape != graph.sample_shape)
        throw std::invalid_argument(input.description + ": examples are " + std::to_string(input.channels) + "x" +
                                    std::to_string(input.height) + "x" + std::to_string(input.width) + ", " +
                                    m.description + " takes " + std::to_string(graph.sample_shape[0]) + "x" +
                                    std::to_string(graph.sample_shape[1]) + "x" + std::to_string(graph.sample_shape[2]));
    std::unique_ptr<PredictionWriter> out = openPredictionWriter(r.out, graph.classes, graph.metadata.class_names);
    engine::CpuDevice device(r.threads);
    device.bindThreads();
    engine::inference::CompileOptions options;
    options.max_batch = std::max<int64_t>(options.max_batch, r.batch_size);
    engine::inference::CompiledGraph compiled(graph, device, options);
    const DevicePlan plan = planDevices(x, {}, 0, 0);

    profiler::RunWriter writer(r.db, specFor(r, m, x, plan, device.threads()));
    PredictOutcome outcome;
    outcome.id = writer.runId();
    writer.attributes({{runattr::kPredictSourceRun, std::to_string(m.run.value)},
                       {runattr::kPredictModel, m.description},
                       {runattr::kPredictSplit, r.split},
                       {runattr::kPredictOutput, r.out},
                       {runattr::kPredictBatchSize, std::to_string(r.batch_size)}});
    say("predicting " + input.description + " with " + m.description + ", batch " + std::to_string(r.batch_size) +
        ", " + std::to_string(device.threads()) + " thread(s) -> " + r.out);

    engine::RunSummary summary;
    std::vector<float> logits;
    int64_t correct = 0;
    try {
        engine::TrainInput batches(*input.pipeline, 0);
        batches.startEpoch(0);
        const Clock::time_point start = Clock::now();
        for (int64_t step = 1;; ++step) {
            if (r.stop && r.stop->load()) {
                summary.stop_reason = engine::StopReason::Stopped;
                break;
            }
            engine::StepRecord rec;
            rec.step = step;
            Clock::time_point t = Clock::now();
            const engine::BatchView batch = batches.next();
            rec.input_seconds = since(t);
            if (batch.count == 0) break;
            logits.resize(static_cast<size_t>(batch.count * graph.classes));
            t = Clock::now();
            compiled.run(batch.x, batch.count, logits.data());
            rec.forward_seconds = since(t);
            t = Clock::now();
            out->write(outcome.examples, logits.data(), batch.count, batch.y);
            rec.output_seconds = since(t);
            for (int64_t i = 0; i < batch.count; ++i) {
                const float* row = logits.data() + i * graph.classes;
                correct += (std::max_element(row, row + graph.classes) - row) == batch.y[i];
            }
            rec.step_seconds = rec.input_seconds + rec.forward_seconds + rec.output_seconds;
            rec.samples = batch.count;
            rec.samples_per_second = static_cast<double>(batch.count) / rec.step_seconds;
            outcome.examples += batch.count;
            rec.wall_seconds = since(start);
            batches.recordStages(rec);
            summary.input_seconds += rec.input_seconds;
            summary.steps = step;
            writer.step(rec);
        }
        outcome.seconds = since(start);
        out->close();
        writer.attributes({{runattr::kPredictOutputBytes, std::to_string(out->bytesWritten())}});
        if (!summary.stop_reason) summary.stop_reason = engine::StopReason::Epochs;
    } catch (const std::exception& e) {
        outcome.message = "step " + std::to_string(summary.steps + 1) + ": " + e.what();
        summary.train_seconds = outcome.seconds;
        writer.finish(profiler::RunStatus::Failed, summary, outcome.message);
        return outcome;
    }
    outcome.examples_per_second = outcome.seconds > 0 ? static_cast<double>(outcome.examples) / outcome.seconds : 0.0;
    outcome.accuracy = outcome.examples > 0 ? static_cast<double>(correct) / static_cast<double>(outcome.examples) : 0.0;
    summary.epochs_completed = summary.stop_reason == engine::StopReason::Epochs ? 1 : 0;
    summary.train_seconds = outcome.seconds;
    summary.throughput = outcome.examples_per_second;
    if (outcome.examples > 0) {
        // The accuracy of the predictions against the split's labels, as an evaluation of the split.
        engine::EvalRecord eval;
        eval.step = summary.steps;
        eval.split = r.split;
        eval.accuracy = outcome.accuracy;
        eval.samples = outcome.examples;
        eval.wall_seconds = outcome.seconds;
        writer.eval(eval);
        summary.evaluations = 1;
        summary.final_accuracy = summary.best_accuracy = outcome.accuracy;
    }
    outcome.status = summary.stop_reason == engine::StopReason::Stopped ? profiler::RunStatus::Stopped
                                                                         : profiler::RunStatus::Completed;
    if (outcome.status == profiler::RunStatus::Stopped)
        outcome.message = "stopped by the user after " + std::to_string(outcome.examples) + " examples";
    writer.finish(outcome.status, summary, outcome.message);
    outcome.verdict = RunProfiler::classifyStored(r.db, outcome.id);
    return outcome;
}

}  // namespace trainbench::app
