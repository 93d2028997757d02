// `trainbench-cli loadtest MODEL|URL`: MLPerf-style scenarios against a TensorFlow Serving predict
// endpoint — a server this command starts for a trained run, or one already running — printed,
// exported (perf_analyzer CSV, JSON) and recorded as a run of kind `serve` (docs/loadtest.md).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/cli/servecommands.h"
#include "app/cli/stopsignals.h"
#include "app/experiment/experimenterror.h"
#include "app/inference/modelsource.h"
#include "app/inference/servedmodel.h"
#include "app/loadtest/loadtest.h"
#include "app/loadtest/modelexamples.h"
#include "app/loadtest/perfcsv.h"
#include "app/loadtest/resultjson.h"
#include "app/loadtest/servingrunverdict.h"
#include "app/predict/replicaprocess.h"
#include "app/run/deviceplan.h"
#include "app/run/exitcodes.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"
#include "profiler/format/numberformat.h"
#include "profiler/plan/quantities.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/storeerror.h"

namespace trainbench::cli {

namespace {

using namespace app::loadtest;
namespace fs = std::filesystem;
namespace runattr = profiler::runattr;

class Usage : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};
struct Stopped {};

std::chrono::microseconds micros(const std::string& text, const std::string& flag) {
    // A zero duration is a setting here ("--min-duration 0s": the query count alone decides).
    if (const size_t digits = text.find_first_not_of("0."); digits != 0 && text.find_first_of("123456789") == std::string::npos &&
                                                       (digits == std::string::npos || text.substr(digits) == "s" ||
                                                        text.substr(digits) == "ms" || text.substr(digits) == "us"))
        return std::chrono::microseconds(0);
    try {
        return std::chrono::microseconds(static_cast<int64_t>(profiler::parseDuration(text, flag) * 1e6 + 0.5));
    } catch (const std::exception& e) {
        throw Usage(e.what());
    }
}

// The server `loadtest MODEL` measures: `trainbench-cli serve MODEL` in a process of its own (so the
// load generator's threads and the server's are separate processes, as they are in production), on
// a free loopback port, stopped with SIGTERM at the end.
class ServerProcess {
public:
    ServerProcess(const LoadTestArgs& a, const StopSignals& signals) {
        char dirTemplate[] = "/tmp/trainbench-loadtest-XXXXXX";
        if (!::mkdtemp(dirTemplate)) throw std::runtime_error("cannot make a temporary folder for the server's address");
        dir_ = dirTemplate;
        try {
            start(a, signals);
        } catch (...) {
            std::error_code ec;
            fs::remove_all(dir_, ec);  // the destructor does not run for a constructor that throws
            throw;
        }
    }

private:
    void start(const LoadTestArgs& a, const StopSignals& signals) {
        const std::string ready = dir_ + "/ready";
        std::vector<std::string> argv = {"/proc/self/exe", "serve", "--db=" + a.db, "--bind=127.0.0.1", "--port=0",
                                         "--ready-file=" + ready};
        for (std::string& s : servingArguments(a.serving)) argv.push_back(std::move(s));
        argv.push_back("--");
        argv.push_back(a.target);
        process_ = std::make_unique<app::ReplicaProcess>(argv);
        // Deadline: opening the run's data and, for int8, calibrating take seconds; minutes mean trouble.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
        for (;;) {
            if (signals.requested().load()) throw Stopped{};
            if (std::ifstream in(ready); in && std::getline(in, url_) && !url_.empty()) break;
            pollfd p{process_->fd(), POLLIN, 0};
            if (::poll(&p, 1, 100) > 0 && !process_->readAvailable()) {
                const std::string how = process_->wait();
                throw std::runtime_error("the server (trainbench-cli serve) ended before it listened (" + how + "):\n" +
                                         output());
            }
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("the server (trainbench-cli serve, pid " + std::to_string(process_->pid()) +
                                         ") did not listen within 5 minutes:\n" + output());
        }
    }

public:
    ~ServerProcess() {
        stop();
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    const std::string& url() const { return url_; }
    // What it printed so far.
    std::string output() {
        std::string text;
        while (auto line = process_->nextLine()) text += "  " + *line + "\n";
        return text;
    }
    // Asks it to stop, waits up to 30 s for it to answer what is in flight, then kills it.
    std::string stop() {
        if (!process_ || stopped_) return {};
        stopped_ = true;
        process_->signal(SIGTERM);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        for (;;) {
            pollfd p{process_->fd(), POLLIN, 0};
            if (::poll(&p, 1, 200) > 0 && !process_->readAvailable()) break;
            if (std::chrono::steady_clock::now() > deadline) {
                process_->signal(SIGKILL);
                break;
            }
        }
        return process_->wait();
    }
    void check() {  // drains its output so that it never blocks on a full pipe
        pollfd p{process_->fd(), POLLIN, 0};
        while (::poll(&p, 1, 0) > 0 && process_->readAvailable()) {
        }
    }

private:
    std::string dir_;
    std::unique_ptr<app::ReplicaProcess> process_;
    std::string url_;
    bool stopped_ = false;
};

std::optional<double> ms(double us, bool known = true) {
    if (!known) return std::nullopt;
    return us / 1000.0;
}

profiler::LoadTestPoint pointOf(const ScenarioResult& r, int64_t index) {
    profiler::LoadTestPoint p;
    p.point = index;
    p.scenario = scenarioName(r.scenario);
    if (r.scenario == Scenario::Server) p.target_qps = r.targetQps;
    if (r.scenario == Scenario::ConcurrencySweep || r.scenario == Scenario::SingleStream) p.concurrency = r.concurrency;
    p.queries = r.completed;
    p.achieved_qps = r.achievedQps;
    const bool any = r.latency.count > 0;
    p.p50_ms = ms(r.latency.p50, any);
    p.p90_ms = ms(r.latency.p90, any);
    p.p95_ms = ms(r.latency.p95, any);
    p.p99_ms = ms(r.latency.p99, any);
    p.p999_ms = ms(r.latency.p999, any);
    const LatencyBreakdown& b = r.breakdown;
    const bool timed = b.withServerTiming > 0;
    p.queue_ms = ms(b.serverQueue, timed);
    p.batch_ms = ms(b.serverBatch, timed);
    p.compute_ms = ms(b.serverCompute, timed);
    p.serialize_ms = ms(b.serverDecode + b.serverEncode, timed);
    p.network_ms = ms(b.clientSend + b.network + b.clientRecv, any);  // the rest: client, kernel, wire
    p.client_bound = r.client.clientBound;
    p.errors = r.failed + r.abandoned;
    for (const SecondPoint& s : r.perSecond) {
        profiler::LoadTestSecond second;
        second.second = s.second;
        second.completed = s.completed;
        if (s.completed > 0) {
            second.p50_ms = s.p50 / 1000.0;
            second.p99_ms = s.p99 / 1000.0;
        }
        p.seconds.push_back(second);
    }
    return p;
}

std::string level(const ScenarioResult& r) {
    switch (r.scenario) {
        case Scenario::Server: return profiler::shortestNumber(r.targetQps) + " QPS";
        case Scenario::Offline: return "all at once";
        default: return std::to_string(r.concurrency) + " outstanding";
    }
}

void printRow(const ScenarioResult& r, double meanBatch) {
    std::printf("  %-12s %-16s %9.1f %9.3f %9.3f %9.3f %9.3f %7.1f %6lld%s%s\n", scenarioName(r.scenario),
                level(r).c_str(), r.achievedQps, r.latency.p50 / 1000, r.latency.p90 / 1000, r.latency.p99 / 1000,
                r.latency.p999 / 1000, meanBatch, static_cast<long long>(r.failed + r.abandoned),
                r.scenario == Scenario::Server ? (r.boundMet ? "  met" : "  MISSED") : "",
                r.client.clientBound ? ("  CLIENT-BOUND: " + r.client.reason).c_str() : "");
    std::fflush(stdout);
}

LoadTestOptions optionsOf(const LoadTestArgs& a) {
    LoadTestOptions o;
    const std::optional<Scenario> s = parseScenario(a.scenario);
    if (!s) throw Usage("--scenario " + a.scenario + ": expected single-stream, server, offline or concurrency");
    o.scenario = a.findMaxQps ? Scenario::Server : *s;
    o.targetQps = a.qps;
    o.latencyBound = micros(a.latencyBound, "--p99");
    o.latencyPercentile = a.percentile > 0 ? a.percentile : 99.0;
    o.findMaxQps = a.findMaxQps;
    o.searchPrecision = a.searchPrecision;
    o.maxProbes = a.maxProbes;
    o.concurrency = a.concurrency;
    o.offlineExpectedQps = a.offlineExpectedQps;
    o.instancesPerQuery = a.instancesPerQuery;
    o.samples = a.samples;
    o.minQueryCount = a.minQueries;
    o.minDuration = std::chrono::duration_cast<std::chrono::milliseconds>(micros(a.minDuration, "--min-duration"));
    o.maxDuration = std::chrono::duration_cast<std::chrono::milliseconds>(micros(a.maxDuration, "--max-duration"));
    o.client.threads = a.clientThreads;
    o.client.requestTimeout =
        std::chrono::duration_cast<std::chrono::milliseconds>(micros(a.requestTimeout, "--request-timeout"));
    o.maxConnections = a.maxConnections;
    o.maxIssueLag = micros(a.maxIssueLag, "--max-issue-lag");
    o.seed = a.seed;
    return o;
}

bool isUrl(const std::string& target) { return target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0; }

struct Recording {
    std::unique_ptr<profiler::RunWriter> writer;
    int64_t points = 0;
};

}  // namespace

int loadtestCommand(const LoadTestArgs& a, const StopSignals& signals) {
    LoadTestOptions o;
    std::optional<app::ModelSource> model;
    std::string token;
    try {
        o = optionsOf(a);
        if (isUrl(a.target)) {
            o.target = parseTargetUrl(a.target, a.serving.modelName);
            if (o.target.model.empty())
                throw Usage(a.target + ": which model? Give its NAME in the URL (/v1/models/NAME) or with --model-name");
            if (a.examples.empty())
                throw Usage("a URL needs --examples FILE (an IDX file of u8 images, e.g. "
                            "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz)");
        } else {
            if (!a.serving.modelName.empty())
                if (std::string e = checkModelName(a.serving.modelName); !e.empty()) throw Usage("--model-name: " + e);
            servingOptions(a.serving);  // refuse bad server flags before anything starts
            model = app::openModel(a.target, a.db);
        }
        // A server that wants a token (--auth-token-file) gets it with every query.
        token = servingOptions(a.serving).auth_token;
        o.target.bearerToken = token;
        if (!a.examples.empty()) {
            o.examples = loadIdxExamples(a.examples, a.examplesLimit, static_cast<float>(a.inputScale));
        } else {
            o.examples = modelTestExamples(*model, a.examplesLimit);
        }
        if (!a.exampleShape.empty()) o.examples.shape = a.exampleShape;
        if (std::string e = checkExampleShape(o.examples.shape, o.examples.exampleSize); !e.empty())
            throw Usage("--example-shape: " + e);
    } catch (const LoadTestError& e) {
        std::fprintf(stderr, "loadtest: %s\n", e.what());
        return kExitUsage;
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "loadtest: %s\n", e.what());
        return kExitUsage;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "loadtest: %s\n", e.what());
        return kExitUsage;
    } catch (const engine::DataError& e) {
        std::fprintf(stderr, "loadtest: %s\n", e.what());
        return kExitRunFailed;
    }

    // A run's model is measured as the server builds it (same precision and calibration): its size
    // and its accuracy on the run's full test set, which the load test records next to its latency.
    std::optional<app::ServedModelQuality> quality;
    if (model && model->run) {
        try {
            app::ServedModelOptions m;
            m.precision = a.serving.precision;
            m.calibration_batches = a.serving.calibrationBatches;
            const std::string key = m.precision + "/" + std::to_string(m.calibration_batches);
            if (a.measuredModels && a.measuredModels->count(key)) {
                quality = a.measuredModels->at(key);
            } else {
                quality = app::measureServedModel(*model, m);
                if (a.measuredModels) a.measuredModels->emplace(key, *quality);
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "loadtest: measuring the model's size and accuracy: %s\n", e.what());
            return kExitRunFailed;
        }
        if (!a.quiet) {
            const app::ServedModelQuality& q = *quality;
            std::printf("model: %s, %s", q.precision.c_str(), profiler::fmtBytes(static_cast<double>(q.weight_bytes)).c_str());
            if (q.precision != "fp32")
                std::printf(" (%.2fx smaller than fp32's %s)", double(q.fp32_weight_bytes) / double(std::max<int64_t>(1, q.weight_bytes)),
                            profiler::fmtBytes(static_cast<double>(q.fp32_weight_bytes)).c_str());
            std::printf("; top-1 %s on the run's %lld test examples", profiler::fmtPercent(q.accuracy).c_str(),
                        static_cast<long long>(q.test_examples));
            if (q.precision != "fp32") std::printf(" (fp32 %s)", profiler::fmtPercent(q.fp32_accuracy).c_str());
            std::printf("\n");
        }
    }

    std::unique_ptr<ServerProcess> server;
    if (model) {
        try {
            if (!a.quiet) std::printf("starting trainbench-cli serve %s ...\n", a.target.c_str());
            std::fflush(stdout);
            server = std::make_unique<ServerProcess>(a, signals);
            o.target = parseTargetUrl(server->url(), "");
            o.target.bearerToken = token;
        } catch (const Stopped&) {
            return kExitStopped;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "loadtest: %s\n", e.what());
            return kExitRunFailed;
        }
    }
    const std::string url = "http://" + o.target.host + ":" + std::to_string(o.target.port) + "/v1/models/" + o.target.model;

    Recording rec;
    if (a.record) {
        try {
            profiler::RunSpec spec;
            spec.kind = "serve";
            spec.name = !a.name.empty() ? a.name : "loadtest-" + o.target.model;
            nlohmann::json config = settingsJson(o);
            // What `apply` needs to run the load test again with an action's change.
            config["target"] = model && model->run ? std::to_string(model->run->id.value) : a.target;
            config["examples_file"] = a.examples;
            config["examples_limit"] = a.examplesLimit;
            config["example_shape"] = a.exampleShape;
            config["input_scale"] = a.inputScale;
            config["scenario_asked"] = a.scenario;
            if (model) config["server"] = servingArguments(a.serving);
            spec.config_json = config.dump();
            spec.devices = "cpu";
            if (model) spec.param_count = model->graph.parameterCount();
            if (model && model->run) {
                const app::Experiment& x = model->run->experiment;
                spec.dataset = x.data.dataset;
                spec.model = engine::modelName(x.model);
                const app::DevicePlan d = app::planDevices(x);
                if (!d.spec.id.empty()) spec.device_type = d.spec.id;
                spec.device_count = 1;
                spec.price_per_device_hour = d.price_per_device_hour;
            }
            rec.writer = std::make_unique<profiler::RunWriter>(a.db, spec);
            std::vector<std::pair<std::string, std::string>> attrs = {
                {runattr::kLoadtestTarget, url},
                {runattr::kLoadtestScenario, a.findMaxQps ? "server" : scenarioName(o.scenario)},
                {runattr::kLoadtestInstancesPerQuery, std::to_string(o.instancesPerQuery)},
                {runattr::kLoadtestClientThreads, std::to_string(o.client.threads)},
                {runattr::kLoadtestHostCores, std::to_string(std::max(1u, std::thread::hardware_concurrency()))},
                {runattr::kLoadtestExamples, o.examples.source},
                {runattr::kLoadtestLatencyBoundMs, profiler::shortestNumber(double(o.latencyBound.count()) / 1000.0)},
            };
            if (model) {
                const ServingFlags& f = a.serving;
                std::string sizes;
                for (int64_t s : f.allowedBatchSizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
                const engine::serving::ServingOptions used = servingOptions(f);
                const int64_t threads = used.batching.resolved().num_batch_threads;
                attrs.insert(attrs.end(),
                             {{runattr::kServeModel, model->run ? "run " + std::to_string(model->run->id.value) + " (" +
                                                                      model->name + ")"
                                                                : model->file},
                              {runattr::kServeSourceRun,
                               model->run ? std::to_string(model->run->id.value) : model->file},
                              {runattr::kServePrecision, f.precision},
                              {runattr::kServeEnableBatching, f.enableBatching ? "1" : "0"},
                              {runattr::kServeMaxBatchSize, std::to_string(f.maxBatchSize)},
                              {runattr::kServeBatchTimeoutMicros, std::to_string(f.batchTimeoutMicros)},
                              {runattr::kServeNumBatchThreads, std::to_string(threads)},
                              {runattr::kServeMaxEnqueuedBatches, std::to_string(f.maxEnqueuedBatches)},
                              {runattr::kServeAllowedBatchSizes, sizes},
                              {runattr::kServeInstances, std::to_string(f.instances > 0 ? f.instances : threads)},
                              {runattr::kServeThreadsPerInstance, std::to_string(f.threadsPerInstance)}});
            }
            if (quality) {
                const auto exact = [](double v) { return profiler::shortestNumber(v); };
                attrs.insert(attrs.end(), {{runattr::kServeWeightBytes, std::to_string(quality->weight_bytes)},
                                           {runattr::kServeFp32WeightBytes, std::to_string(quality->fp32_weight_bytes)},
                                           {runattr::kServeTestAccuracy, exact(quality->accuracy)},
                                           {runattr::kServeFp32TestAccuracy, exact(quality->fp32_accuracy)},
                                           {runattr::kServeTestExamples, std::to_string(quality->test_examples)}});
                if (!quality->calibration.empty()) attrs.push_back({runattr::kServeCalibration, quality->calibration});
            }
            rec.writer->attributes(attrs);
        } catch (const profiler::StoreError& e) {
            std::fprintf(stderr, "loadtest: %s\n", e.what());
            return kExitStore;
        }
    }

    if (!a.quiet) {
        std::printf("load test of %s (%s", url.c_str(), a.findMaxQps ? "searching the highest server QPS" : a.scenario.c_str());
        if (rec.writer) std::printf("; run %lld of %s", static_cast<long long>(rec.writer->runId().value), a.db.c_str());
        std::printf(")\n  examples: %s, %d per query\n", o.examples.source.c_str(), o.instancesPerQuery);
        std::printf("  %-12s %-16s %9s %9s %9s %9s %9s %7s %6s\n", "SCENARIO", "LOAD", "QPS", "P50 MS", "P90 MS", "P99 MS",
                    "P99.9 MS", "BATCH", "ERRORS");
    }
    bool clientBound = false;
    o.onRun = [&](const ScenarioResult& r) {
        if (server) server->check();
        clientBound = clientBound || r.client.clientBound;
        if (!a.quiet) printRow(r, r.breakdown.meanBatch);
        if (rec.writer) rec.writer->loadTestPoint(pointOf(r, rec.points++));
        if (signals.requested().load()) throw Stopped{};
    };

    LoadTestResult result;
    profiler::RunStatus status = profiler::RunStatus::Completed;
    std::string message;
    try {
        result = runLoadTest(o);
    } catch (const Stopped&) {
        status = profiler::RunStatus::Stopped;
        message = "stopped (Ctrl-C or SIGTERM) after " + std::to_string(rec.points) + " point(s)";
    } catch (const std::exception& e) {
        status = profiler::RunStatus::Failed;
        message = e.what();
    }
    std::string serverEnd;
    if (server) serverEnd = server->stop();

    if (result.search && !a.quiet) {
        const QpsSearch& s = *result.search;
        std::printf("  highest QPS meeting p%s <= %s: %s (%zu probes; %s)\n",
                    profiler::shortestNumber(o.latencyPercentile).c_str(),
                    profiler::millis(double(o.latencyBound.count()) / 1e6).c_str(),
                    s.bestQps > 0 ? profiler::shortestNumber(std::round(s.bestQps * 10) / 10).c_str() : "none",
                    s.probes.size(), s.note.c_str());
    }
    if (clientBound && !a.quiet)
        std::printf("  the load generator was the bottleneck at a point marked CLIENT-BOUND: its figures are the client's, "
                    "not the server's (more --client-threads, or a client on another machine)\n");
    if (rec.writer) {
        try {
            std::vector<std::pair<std::string, std::string>> attrs = {{runattr::kLoadtestClientBound, clientBound ? "1" : "0"}};
            if (result.search) attrs.emplace_back(runattr::kLoadtestBestQps, profiler::shortestNumber(result.search->bestQps));
            rec.writer->attributes(attrs);
            engine::RunSummary summary;
            summary.steps = 0;
            double seconds = 0, best = 0;
            for (const ScenarioResult& r : result.runs) {
                seconds += r.durationSeconds;
                best = std::max(best, r.inferencesPerSecond);
            }
            summary.train_seconds = seconds;
            summary.throughput = result.search ? result.search->bestQps * o.instancesPerQuery : best;
            rec.writer->finish(status, summary, message);
        } catch (const profiler::StoreError& e) {
            std::fprintf(stderr, "loadtest: %s\n", e.what());
            return kExitStore;
        }
    }
    if (status == profiler::RunStatus::Failed) {
        std::fprintf(stderr, "loadtest: %s\n", message.c_str());
        if (server) {
            const std::string out = server->output();
            if (!out.empty()) std::fprintf(stderr, "the server (%s) said:\n%s", serverEnd.c_str(), out.c_str());
        }
        return kExitRunFailed;
    }
    try {
        if (!a.csv.empty()) engine::writeFileAtomically(a.csv, perfAnalyzerCsv(result));
        if (!a.json.empty()) engine::writeFileAtomically(a.json, resultJson(result).dump(2) + "\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "loadtest: %s\n", e.what());
        return kExitIo;
    }
    if (rec.writer && !a.quiet) {
        try {
            profiler::RunStore store = profiler::RunStore::open(a.db, profiler::OpenMode::ReadOnly);
            if (const auto row = store.findRun(std::to_string(rec.writer->runId().value))) {
                const profiler::ServingVerdict v = app::servingVerdictOf(store, *row);
                std::printf("  verdict: %s (%s): %s\n", profiler::servingBoundName(v.bound), profiler::severityName(v.severity),
                            v.summary.c_str());
                if (!v.actions.empty())
                    std::printf("  %zu action(s): trainbench-cli profile %lld --db %s\n", v.actions.size(),
                                static_cast<long long>(row->id.value), a.db.c_str());
            }
        } catch (const profiler::StoreError& e) {
            std::fprintf(stderr, "loadtest: reading the verdict back: %s\n", e.what());
        }
    }
    if (!a.quiet) {
        if (!a.csv.empty()) std::printf("  perf_analyzer CSV: %s\n", a.csv.c_str());
        if (!a.json.empty()) std::printf("  JSON: %s\n", a.json.c_str());
        if (rec.writer)
            std::printf("  recorded as run %lld (trainbench-cli show %lld --db %s)\n",
                        static_cast<long long>(rec.writer->runId().value),
                        static_cast<long long>(rec.writer->runId().value), a.db.c_str());
    }
    return status == profiler::RunStatus::Stopped ? kExitStopped : kExitOk;
}

}  // namespace trainbench::cli
