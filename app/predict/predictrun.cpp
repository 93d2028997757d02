#include "app/predict/predictrun.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <signal.h>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.h"
#include "app/inference/modelsource.h"
#include "app/predict/predictionwriter.h"
#include "app/predict/replicaprocess.h"
#include "app/run/deviceplan.h"
#include "app/run/runprofiler.h"
#include "engine/data/pipeline/predictioninput.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/model/layerstack.h"
#include "engine/train/traininput.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The run's experiment with the prediction's data: --set may change data.* only (the model is the
// checkpoint's, training settings mean nothing here). The prediction's batch is recorded as
// train.batch_size, so that the verdict's batch actions speak of the batch it predicted with.
Experiment predictionExperiment(const ModelSource& m, const PredictRequest& r) {
    for (const std::string& o : r.overrides)
        if (o.rfind("data.", 0) != 0)
            throw std::invalid_argument("--set " + o + ": a prediction takes data.* keys only (the model is " +
                                        m.description + ")");
    std::vector<std::string> overrides = r.overrides;
    overrides.push_back("train.batch_size=" + std::to_string(r.batch_size));
    if (!m.run) {
        const bool saysWhich = std::any_of(r.overrides.begin(), r.overrides.end(),
                                           [](const std::string& o) { return o.rfind("data.dataset=", 0) == 0; });
        if (!saysWhich)
            throw std::invalid_argument("MODEL " + m.file + " is an ONNX file: it holds no data to predict; say which with "
                                        "--set data.dataset=... and the keys that dataset needs (e.g. --set "
                                        "data.dataset=fashion-mnist --set data.path=/usr/share/datasets/fashion-mnist)");
        return onnxPredictionExperiment(m.file, overrides);
    }
    return parseExperiment(m.run->experiment.resolved.dump(), m.run->experiment.source_path, overrides);
}

// How the graph takes the pipeline's examples: the pipeline scales pixels as training did (1/255
// for images, CSV as it is), the graph expects stored values times its scale plus its shift. For a
// run both scales are the same (the graph then takes its input as it comes).
void takePipelineInput(engine::graph::Graph& graph, const Experiment& x) {
    graph.metadata.input_scale /= metadataFor(x).input_scale;
}

// What every mode needs before the first batch: the model compiled for the pipeline's scaled input,
// the input (a shard of it in a replica), the output file.
struct Prepared {
    ModelSource model;
    Experiment experiment;
    engine::graph::Graph graph;
    engine::PredictionInput input;
};

Prepared prepare(const PredictRequest& r, int shards, int shard) {
    if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be at least 1");
    ModelSource m = openModel(r.model, r.db);
    Experiment x = predictionExperiment(m, r);
    engine::graph::Graph graph = engine::graph::optimizeForInference(m.graph);
    takePipelineInput(graph, x);
    engine::PredictionInput input =
        engine::openPredictionInput(x.data, r.split, r.batch_size, graph.classes, r.log, shards, shard);
    const engine::graph::Dims shape{input.channels, input.height, input.width};
    // A CSV row (1x1xF) is a vector of F values: what a model of [F] features or F token ids takes.
    const bool row = graph.sample_shape.size() == 1 && input.channels == 1 && input.height == 1 &&
                     input.width == graph.sample_shape[0];
    if (shape != graph.sample_shape && !row)
        throw std::invalid_argument(input.description + ": examples are " + engine::dimsText(shape) + ", " + m.description +
                                    " takes " + engine::dimsText(graph.sample_shape));
    return {std::move(m), std::move(x), std::move(graph), std::move(input)};
}

struct ShardTotals {
    int64_t steps = 0, examples = 0, correct = 0;
    double input_seconds = 0.0;
    bool stopped = false;
};

// Predicts every batch of the input: each one timed as input, forward and output and handed to
// `onStep` with how many of its predictions were right.
ShardTotals predictShard(Prepared& p, const PredictRequest& r, int threads, PredictionWriter& out,
                         const std::function<void(engine::StepRecord&, int64_t correct)>& onStep) {
    engine::CpuDevice device(threads);
    device.bindThreads();
    engine::inference::CompileOptions options;
    options.max_batch = std::max<int64_t>(options.max_batch, r.batch_size);
    engine::inference::CompiledGraph compiled(p.graph, device, options);
    const int64_t classes = p.graph.classes;
    ShardTotals t;
    std::vector<float> logits;
    engine::TrainInput batches(*p.input.pipeline, 0);
    batches.startEpoch(0);
    const Clock::time_point start = Clock::now();
    for (int64_t step = 1;; ++step) {
        if (r.stop && r.stop->load()) {
            t.stopped = true;
            break;
        }
        engine::StepRecord rec;
        rec.step = step;
        Clock::time_point at = Clock::now();
        const engine::BatchView batch = batches.next();
        rec.input_seconds = since(at);
        if (batch.count == 0) break;
        logits.resize(static_cast<size_t>(batch.count * classes));
        at = Clock::now();
        compiled.run(batch.x, batch.count, logits.data());
        rec.forward_seconds = since(at);
        at = Clock::now();
        out.write(t.examples, logits.data(), batch.count, batch.y);
        rec.output_seconds = since(at);
        int64_t correct = 0;
        for (int64_t i = 0; i < batch.count; ++i) {
            const float* row = logits.data() + i * classes;
            correct += (std::max_element(row, row + classes) - row) == batch.y[i];
        }
        rec.step_seconds = rec.input_seconds + rec.forward_seconds + rec.output_seconds;
        rec.samples = batch.count;
        rec.samples_per_second = static_cast<double>(batch.count) / rec.step_seconds;
        rec.wall_seconds = since(start);
        batches.recordStages(rec);
        t.steps = step;
        t.examples += batch.count;
        t.correct += correct;
        t.input_seconds += rec.input_seconds;
        onStep(rec, correct);
    }
    return t;
}

profiler::RunSpec specFor(const PredictRequest& r, const Prepared& p, const DevicePlan& d, int threads) {
    const Experiment& x = p.experiment;
    profiler::RunSpec spec;
    spec.name = !r.name.empty() ? r.name : "predict-" + (p.model.run ? p.model.run->experiment.name : p.model.name);
    spec.config_json = x.resolved.dump();
    spec.strategy = "single";
    spec.devices = r.replicas > 1 ? "cpu:" + std::to_string(r.replicas) : "cpu";
    spec.replicas = r.replicas;
    spec.global_batch = r.batch_size;
    spec.threads = threads;
    spec.dataset = x.data.dataset;
    if (!p.model.run) spec.model = "onnx(" + std::filesystem::path(p.model.file).filename().string() + ")";
    else spec.model = engine::modelName(x.model);
    if (!d.spec.id.empty()) spec.device_type = d.spec.id;
    spec.device_count = 1;  // the host: its replicas share it
    spec.price_per_device_hour = d.price_per_device_hour;
    spec.param_count = p.graph.parameterCount();
    spec.kind = "predict";
    return spec;
}

// The end of a run, whichever way it predicted: totals, the accuracy as an evaluation of the split,
// the verdict.
PredictOutcome finish(const PredictRequest& r, profiler::RunWriter& writer, PredictOutcome o, const ShardTotals& t,
                      double seconds) {
    engine::RunSummary summary;
    summary.steps = t.steps;
    summary.input_seconds = t.input_seconds;
    summary.train_seconds = seconds;
    o.examples = t.examples;
    o.seconds = seconds;
    o.examples_per_second = seconds > 0 ? static_cast<double>(t.examples) / seconds : 0.0;
    o.accuracy = t.examples > 0 ? static_cast<double>(t.correct) / static_cast<double>(t.examples) : 0.0;
    summary.throughput = o.examples_per_second;
    summary.stop_reason = t.stopped ? engine::StopReason::Stopped : engine::StopReason::Epochs;
    summary.epochs_completed = t.stopped ? 0 : 1;
    if (t.examples > 0) {
        engine::EvalRecord eval;
        eval.step = t.steps;
        eval.split = r.split;
        eval.accuracy = o.accuracy;
        eval.samples = t.examples;
        eval.wall_seconds = seconds;
        writer.eval(eval);
        summary.evaluations = 1;
        summary.final_accuracy = summary.best_accuracy = o.accuracy;
    }
    o.status = t.stopped ? profiler::RunStatus::Stopped : profiler::RunStatus::Completed;
    if (t.stopped) o.message = "stopped by the user after " + std::to_string(t.examples) + " examples";
    writer.finish(o.status, summary, o.message);
    o.verdict = RunProfiler::classifyStored(r.db, o.id);
    return o;
}

int threadsPerReplica(const PredictRequest& r) {
    const int total = r.threads > 0 ? r.threads : engine::CpuDevice(0).threads();
    return std::max(1, total / std::max(1, r.replicas));
}

std::vector<std::pair<std::string, std::string>> startAttributes(const PredictRequest& r, const Prepared& p) {
    return {{runattr::kPredictSourceRun, p.model.run ? std::to_string(p.model.run->id.value) : p.model.file},
            {runattr::kPredictModel, p.model.description},
            {runattr::kPredictSplit, r.split},
            {runattr::kPredictOutput, r.out},
            {runattr::kPredictBatchSize, std::to_string(r.batch_size)},
            {runattr::kPredictReplicas, std::to_string(r.replicas)}};
}

// --- one process ---------------------------------------------------------------------------

PredictOutcome predictHere(const PredictRequest& r) {
    Prepared p = prepare(r, 1, 0);
    std::unique_ptr<PredictionWriter> out = openPredictionWriter(r.out, p.graph.classes, p.graph.metadata.class_names);
    const int threads = r.threads > 0 ? r.threads : engine::CpuDevice(0).threads();
    profiler::RunWriter writer(r.db, specFor(r, p, planDevices(p.experiment, {}, 0, 0), threads));
    PredictOutcome o;
    o.id = writer.runId();
    writer.attributes(startAttributes(r, p));
    if (r.log)
        r.log("predicting " + p.input.description + " with " + p.model.description + ", batch " +
              std::to_string(r.batch_size) + ", " + std::to_string(threads) + " thread(s) -> " + r.out);
    ShardTotals t;
    const Clock::time_point start = Clock::now();
    try {
        t = predictShard(p, r, threads, *out, [&](engine::StepRecord& rec, int64_t) { writer.step(rec); });
        out->close();
        writer.attributes({{runattr::kPredictOutputBytes, std::to_string(out->bytesWritten())}});
    } catch (const std::exception& e) {
        o.message = "step " + std::to_string(t.steps + 1) + ": " + e.what();
        engine::RunSummary summary;
        summary.train_seconds = since(start);
        writer.finish(profiler::RunStatus::Failed, summary, o.message);
        return o;
    }
    return finish(r, writer, o, t, since(start));
}

// --- a replica process ---------------------------------------------------------------------

// One line per batch, then one at the end; anything else a replica prints is a message.
constexpr const char* kStepLine = "step ";
constexpr const char* kDoneLine = "done ";

PredictOutcome predictAsReplica(const PredictRequest& r) {
    Prepared p = prepare(r, r.replicas, r.replica);
    std::unique_ptr<PredictionWriter> out = openPredictionWriter(r.out, p.graph.classes, p.graph.metadata.class_names);
    const ShardTotals t = predictShard(p, r, r.threads > 0 ? r.threads : 1, *out, [](engine::StepRecord& rec, int64_t correct) {
        const nlohmann::json line = {{"samples", rec.samples},           {"input", rec.input_seconds},
                                     {"forward", rec.forward_seconds},   {"output", rec.output_seconds},
                                     {"correct", correct}};
        std::printf("%s%s\n", kStepLine, line.dump().c_str());
        std::fflush(stdout);
    });
    out->close();
    const nlohmann::json done = {{"examples", t.examples}, {"correct", t.correct}, {"stopped", t.stopped},
                                 {"bytes", out->bytesWritten()}};
    std::printf("%s%s\n", kDoneLine, done.dump().c_str());
    std::fflush(stdout);
    PredictOutcome o;
    o.status = t.stopped ? profiler::RunStatus::Stopped : profiler::RunStatus::Completed;
    o.examples = t.examples;
    return o;
}

// --- the parent of replica processes -------------------------------------------------------

std::vector<std::string> replicaCommand(const PredictRequest& r, int index, int threads) {
    std::vector<std::string> argv = {r.program, "predict", r.model, "--db", r.db, "--split", r.split,
                                     "--batch-size", std::to_string(r.batch_size), "--threads", std::to_string(threads),
                                     "-o", replicaOutput(r.out, index, r.replicas),
                                     "--replica", std::to_string(index) + "/" + std::to_string(r.replicas), "-q"};
    for (const std::string& o : r.overrides) {
        argv.push_back("--set");
        argv.push_back(o);
    }
    return argv;
}

PredictOutcome predictWithReplicas(const PredictRequest& r) {
    // The parent checks MODEL, --set and the data before it records a run or starts anything.
    Prepared p = prepare(r, r.replicas, 0);
    openPredictionWriter(replicaOutput(r.out, 0, r.replicas), p.graph.classes, {});  // the name, abandoned
    const int threads = threadsPerReplica(r);
    profiler::RunWriter writer(r.db, specFor(r, p, planDevices(p.experiment, {}, 0, 0), threads * r.replicas));
    PredictOutcome o;
    o.id = writer.runId();
    writer.attributes(startAttributes(r, p));
    if (r.log)
        r.log("predicting " + r.split + " split in " + std::to_string(r.replicas) + " replica processes of " +
              std::to_string(threads) + " thread(s) with " + p.model.description + " -> " +
              replicaOutput(r.out, 0, r.replicas) + " ...");
    std::vector<std::unique_ptr<ReplicaProcess>> processes;
    std::vector<ReplicaProcess*> view;
    ShardTotals t;
    std::vector<bool> done(static_cast<size_t>(r.replicas), false);
    std::vector<std::string> said(static_cast<size_t>(r.replicas));
    std::string failure;
    uint64_t bytes = 0;
    const Clock::time_point start = Clock::now();
    try {
        for (int i = 0; i < r.replicas; ++i) {
            processes.push_back(std::make_unique<ReplicaProcess>(replicaCommand(r, i, threads)));
            view.push_back(processes.back().get());
        }
        bool relayed = false;
        readReplicaLines(
            view, r.replica_silence,
            [&](size_t i, const std::optional<std::string>& line) {
                if (!line) {
                    const std::string how = processes[i]->wait();
                    if (how != "exit 0" || !done[i]) {
                        failure = "replica " + std::to_string(i) + " (pid " + std::to_string(processes[i]->pid()) +
                                  ") " + (how == "exit 0" ? "ended without finishing" : how) +
                                  (said[i].empty() ? "" : ": " + said[i]);
                        return false;
                    }
                    return true;
                }
                if (line->rfind(kStepLine, 0) == 0) {
                    const nlohmann::json j = nlohmann::json::parse(line->substr(5));
                    engine::StepRecord rec;
                    rec.step = ++t.steps;
                    rec.samples = j.at("samples").get<int64_t>();
                    rec.input_seconds = j.at("input").get<double>();
                    rec.forward_seconds = j.at("forward").get<double>();
                    rec.output_seconds = j.at("output").get<double>();
                    rec.step_seconds = rec.input_seconds + rec.forward_seconds + rec.output_seconds;
                    rec.samples_per_second = static_cast<double>(rec.samples) / rec.step_seconds;
                    rec.wall_seconds = since(start);
                    t.examples += rec.samples;
                    t.correct += j.at("correct").get<int64_t>();
                    t.input_seconds += rec.input_seconds;
                    writer.step(rec);
                } else if (line->rfind(kDoneLine, 0) == 0) {
                    const nlohmann::json j = nlohmann::json::parse(line->substr(5));
                    done[i] = true;
                    t.stopped = t.stopped || j.at("stopped").get<bool>();
                    bytes += j.at("bytes").get<uint64_t>();
                } else if (!line->empty()) {
                    said[i] = *line;  // its last message: an error names file and offset
                }
                return true;
            },
            [&] {
                if (r.stop && r.stop->load() && !relayed) {
                    relayed = true;
                    for (auto& proc : processes) proc->signal(SIGINT);
                }
            });
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (!failure.empty()) {
        o.message = failure;
        engine::RunSummary summary;
        summary.steps = t.steps;
        summary.train_seconds = since(start);
        writer.finish(profiler::RunStatus::Failed, summary, o.message);
        return o;  // the other replicas are killed as their processes go
    }
    writer.attributes({{runattr::kPredictOutputBytes, std::to_string(bytes)}});
    return finish(r, writer, o, t, since(start));
}

}  // namespace

Experiment onnxPredictionExperiment(const std::string& file, const std::vector<std::string>& overrides) {
    // parseExperiment needs a model; the file is the model, recorded in its place.
    const nlohmann::json base = {{"name", std::filesystem::path(file).stem().string()}, {"model", {{"preset", "logreg"}}}};
    Experiment x = parseExperiment(base.dump(), file, overrides);
    x.resolved["model"] = {{"onnx", file}};
    return x;
}

std::string replicaOutput(const std::string& out, int index, int count) {
    const std::filesystem::path p(out);
    char part[40];
    std::snprintf(part, sizeof part, "-%05d-of-%05d", index, count);
    return (p.parent_path() / (p.stem().string() + part + p.extension().string())).string();
}

PredictOutcome runPrediction(const PredictRequest& r) {
    if (r.replicas < 1) throw std::invalid_argument("--replicas must be at least 1");
    if (r.replica >= 0) return predictAsReplica(r);
    if (r.replicas > 1) return predictWithReplicas(r);
    return predictHere(r);
}

}  // namespace trainbench::app
