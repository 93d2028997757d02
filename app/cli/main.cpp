// trainbench-cli: everything trainbench does, headless. See docs/cli.md.
#include <CLI/CLI.hpp>

#include "app/cli/commands.h"
#include "app/cli/servecommands.h"
#include "app/run/exitcodes.h"
#include "app/cli/stopsignals.h"
#include "app/run/paths.h"
#include "app/run/versions.h"

int main(int argc, char** argv) {
    using namespace trainbench;
    cli::StopSignals signals;  // before any thread starts, so every thread inherits the blocked mask
    CLI::App app{"trainbench-cli: train, profile and compare models from the command line"};
    app.require_subcommand(1);
    app.set_version_flag("--version", [] {
        std::string v = "trainbench " + app::trainbenchVersion();
        for (const auto& [library, version] : app::libraryVersions()) v += "\n  " + library + " " + version;
        return v;
    });
    const std::string defaultDb = app::defaultRunStorePath();

    cli::RunArgs run;
    auto* runCmd = app.add_subcommand("run", "Train an experiment file and record it in the run store (one run per point of its sweep)");
    runCmd->add_option("file", run.file, "Experiment file (JSON), see docs/experiment-format.md")->required();
    runCmd->add_option("--db", run.db, "Run store (SQLite file)")->default_str(defaultDb);
    runCmd->add_option("--set", run.overrides, "Override a key: --set train.epochs=2 (repeatable)")
        ->allow_extra_args(false);
    runCmd->add_flag("-q,--quiet", run.quiet, "No progress output; print only the summary");
    const auto stepWindow = [](const std::string& v) -> std::string {
        const auto colon = v.find(':');
        try {
            if (colon != std::string::npos) {
                size_t a = 0, b = 0;
                const long long first = std::stoll(v.substr(0, colon), &a), last = std::stoll(v.substr(colon + 1), &b);
                if (a == colon && b == v.size() - colon - 1 && first >= 1 && last >= first) return {};
            }
        } catch (const std::exception&) {
        }
        return "expected FIRST:LAST, two step numbers with 1 <= FIRST <= LAST, e.g. 21:30; got '" + v + "'";
    };
    runCmd->add_option("--trace", run.trace, "Write a Chrome trace (Perfetto) of a window of steps to this file");
    runCmd->add_option("--trace-steps", run.traceSteps, "The traced steps, FIRST:LAST (default 21:30)")
        ->check(CLI::Validator(stepWindow, "FIRST:LAST"));

    cli::RunArgs worker;
    auto* workerCmd = app.add_subcommand(
        "worker", "Run one task of a multi_worker job: TF_CONFIG and TRAINBENCH_JOB_TOKEN from the environment");
    workerCmd->add_option("file", worker.file, "Experiment file (JSON) with strategy.type multi_worker")->required();
    workerCmd->add_option("--db", worker.db, "Run store the chief records in")->default_str(defaultDb);
    workerCmd->add_option("--set", worker.overrides, "Override a key (repeatable)")->allow_extra_args(false);
    workerCmd->add_flag("-q,--quiet", worker.quiet, "No progress output");
    workerCmd->add_option("--trace", worker.trace, "Write this task's Chrome trace to FILE.rank<N>");
    workerCmd->add_option("--trace-steps", worker.traceSteps, "The traced steps, FIRST:LAST")
        ->check(CLI::Validator(stepWindow, "FIRST:LAST"));

    cli::LaunchScriptArgs ls;
    auto* lsCmd = app.add_subcommand("launch-script",
                                     "Write a Slurm batch script or a Kubeflow TFJob manifest for a multi_worker job, or a Kubernetes Deployment for serve");
    lsCmd->add_option("file", ls.file, "Experiment file (JSON) with strategy.type multi_worker; with --serve, the model's path in the container")->required();
    auto* slurmFlag = lsCmd->add_flag("--slurm", ls.slurm, "A Slurm batch script (sbatch), one task per node");
    auto* kfFlag = lsCmd->add_flag("--kubeflow", ls.kubeflow, "A Kubeflow TFJob manifest with a Secret for the token");
    auto* serveFlag = lsCmd->add_flag("--serve", ls.serve,
                                      "A Kubernetes Deployment + Service running `serve` on FILE, a model path in the image");
    slurmFlag->excludes(kfFlag);
    serveFlag->excludes(slurmFlag)->excludes(kfFlag);
    lsCmd->add_option("--replicas", ls.replicas, "--serve: server replicas (default 1)")->check(CLI::Range(1, 10000));
    lsCmd->add_option("--model-name", ls.modelName, "--serve: the NAME of /v1/models/NAME (default: FILE's stem)");
    lsCmd->add_option("--model-claim", ls.modelClaim, "--serve: a PersistentVolumeClaim holding FILE, mounted read-only");
    lsCmd->add_option("--cpu", ls.cpu, "--serve: CPU request and limit of each replica (default 2)");
    lsCmd->add_option("--serve-arg", ls.serveArgs, "--serve: one more option for serve, e.g. --serve-arg=--max-batch-size=32")
        ->allow_extra_args(false);
    lsCmd->add_flag("--no-auth", ls.noAuth,
                    "--serve: no bearer token (by default a Secret holds one and every request must present it)");
    lsCmd->add_option("--workers", ls.workers, "Tasks (default: strategy.replicas)")->check(CLI::Range(1, 4096));
    lsCmd->add_option("--port", ls.port, "Port of every task (default 2222, TFJob's)")->check(CLI::Range(1, 65535));
    lsCmd->add_option("--db", ls.db, "Run store the chief records in, on its host")->default_str(ls.db);
    lsCmd->add_option("--image", ls.image, "Kubeflow: container image with trainbench-cli")->default_str(ls.image);
    lsCmd->add_option("--set", ls.overrides, "Override a key (repeatable)")->allow_extra_args(false);
    lsCmd->add_option("-o,--output", ls.output, "Write to this file instead of standard output");

    cli::PredictArgs predict;
    auto* predictCmd = app.add_subcommand(
        "predict", "Predict a data split with a stored run's model; write the predictions and record a prediction run");
    predictCmd->add_option("model", predict.model, "MODEL: a run id or name whose checkpoint to use, or an .onnx file (then say --set data.dataset=...)")->required();
    predictCmd->add_option("--db", predict.db, "Run store (SQLite file)")->default_str(defaultDb);
    predictCmd->add_option("-o,--out", predict.out, "Predictions file: FILE.csv or FILE.tfrecord")->required();
    predictCmd->add_option("--split", predict.split, "Which split of the data to predict: test or train (default test)")
        ->check(CLI::IsMember({"test", "train"}));
    predictCmd->add_option("--set", predict.overrides, "Another data source or pipeline: --set data.test_files=... (repeatable)")
        ->allow_extra_args(false);
    predictCmd->add_option("--batch-size", predict.batch_size, "Examples per batch (default 256)")->check(CLI::Range(1, 65536));
    predictCmd->add_option("--threads", predict.threads, "Compute threads (default: the machine's cores)")->check(CLI::Range(0, 1024));
    predictCmd->add_option("--name", predict.name, "The run's name (default predict-<model run's name>)");
    predictCmd->add_flag("-q,--quiet", predict.quiet, "Print only the summary");
    predictCmd->add_option("--replicas", predict.replicas, "Replica processes, each predicting a shard into FILE-0000i-of-0000N")
        ->check(CLI::Range(1, 256));
    predictCmd->add_option("--replica", predict.replica, "Internal: run as replica I/N of a --replicas prediction")->group("");
    cli::ServeArgs serve;
    auto* serveCmd = app.add_subcommand(
        "serve", "Serve a trained run's model over HTTP with TensorFlow Serving's REST API and dynamic batching, until Ctrl-C");
    serveCmd->add_option("model", serve.model, "MODEL: a run id or name whose checkpoint to serve")->required();
    serveCmd->add_option("--db", serve.db, "Run store (SQLite file)")->default_str(defaultDb);
    cli::addServingFlags(serveCmd, serve.serving, /*withListen=*/true);
    serveCmd->add_option("--ready-file", serve.readyFile, "Write the model's URL to this file once listening");
    serveCmd->add_flag("-q,--quiet", serve.quiet, "Print nothing but errors");
    cli::LoadTestArgs loadtest;
    auto* loadtestCmd = app.add_subcommand(
        "loadtest", "Measure a served model with MLPerf's scenarios (single-stream, server, offline) or a concurrency sweep; "
                    "record the result as a run of kind serve");
    loadtestCmd->add_option("target", loadtest.target,
                            "MODEL (a run id or name: loadtest starts `serve` for it) or http://HOST:PORT[/v1/models/NAME]")
        ->required();
    loadtestCmd->add_option("--db", loadtest.db, "Run store (SQLite file)")->default_str(defaultDb);
    cli::addServingFlags(loadtestCmd, loadtest.serving, /*withListen=*/false);
    loadtestCmd->add_option("--scenario", loadtest.scenario, "single-stream, server, offline or concurrency (default single-stream)")
        ->check(CLI::IsMember({"single-stream", "server", "offline", "concurrency"}));
    loadtestCmd->add_option("--qps", loadtest.qps, "Server: target queries per second, Poisson arrivals (default 100); "
                                                   "--find-max-qps: the first probe")
        ->check(CLI::Range(0.001, 1e7));
    loadtestCmd->add_option("--p99", loadtest.latencyBound, "Server: the latency bound at --percentile (default 10ms)");
    loadtestCmd->add_option("--percentile", loadtest.percentile, "Server: the percentile the bound applies to (default 99)")
        ->check(CLI::Range(50.0, 99.999));
    loadtestCmd->add_flag("--find-max-qps", loadtest.findMaxQps, "Search the highest server QPS that meets the bound");
    loadtestCmd->add_option("--search-precision", loadtest.searchPrecision, "The search stops at this relative bracket (default 0.02)")
        ->check(CLI::Range(0.001, 1.0));
    loadtestCmd->add_option("--max-probes", loadtest.maxProbes, "The search's most probes (default 16)")->check(CLI::Range(1, 100));
    loadtestCmd->add_option("--concurrency", loadtest.concurrency, "concurrency: the levels, 1,2,4,8 (default)")
        ->delimiter(',')
        ->check(CLI::Range(1, 4096));
    loadtestCmd->add_option("--offline-expected-qps", loadtest.offlineExpectedQps, "offline: sizes the query count, as LoadGen's")
        ->check(CLI::Range(0.0, 1e9));
    loadtestCmd->add_option("--instances-per-query", loadtest.instancesPerQuery, "Examples in each request (default 1)")
        ->check(CLI::Range(1, 65536));
    loadtestCmd->add_option("--samples", loadtest.samples, "Distinct requests built from the examples (default 256)")
        ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
    loadtestCmd->add_option("--min-queries", loadtest.minQueries, "Each run lasts at least this many queries (default 100)")
        ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
    loadtestCmd->add_option("--min-duration", loadtest.minDuration, "... and at least this long (default 2s)");
    loadtestCmd->add_option("--max-duration", loadtest.maxDuration, "Each run ends by this (default 60s)");
    loadtestCmd->add_option("--client-threads", loadtest.clientThreads, "The load generator's threads (default 1)")
        ->check(CLI::Range(1, 256));
    loadtestCmd->add_option("--max-connections", loadtest.maxConnections, "Most connections, so most outstanding queries (default 64)")
        ->check(CLI::Range(1, 100000));
    loadtestCmd->add_option("--max-issue-lag", loadtest.maxIssueLag, "Client-bound above this p99 issue lag (default 2ms)");
    loadtestCmd->add_option("--request-timeout", loadtest.requestTimeout, "Per query (default 10s)");
    loadtestCmd->add_option("--seed", loadtest.seed, "Seeds the arrivals and the order of the samples (default 0)");
    loadtestCmd->add_option("--examples", loadtest.examples,
                            "IDX file of u8 images the queries carry (default with MODEL: the run's test set)");
    loadtestCmd->add_option("--examples-limit", loadtest.examplesLimit, "Examples read (default 1000; 0: all)")
        ->check(CLI::Range(int64_t{0}, int64_t{100'000'000}));
    loadtestCmd->add_option("--example-shape", loadtest.exampleShape,
                            "How an example nests in the JSON, e.g. 1,28,28 (default: the IDX's, or the model's)")
        ->delimiter(',');
    loadtestCmd->add_option("--input-scale", loadtest.inputScale, "Multiply --examples' bytes by this (default 1: as stored)");
    loadtestCmd->add_option("--csv", loadtest.csv, "Write the points as perf_analyzer's CSV");
    loadtestCmd->add_option("--json", loadtest.json, "Write the whole result as JSON");
    loadtestCmd->add_option("--name", loadtest.name, "The run's name (default loadtest-NAME)");
    loadtestCmd->add_flag("!--no-record", loadtest.record, "Do not record the load test in the store");
    loadtestCmd->add_flag("-q,--quiet", loadtest.quiet, "Print nothing but errors");
    cli::ExportModelArgs exportModel;
    exportModel.db = defaultDb;
    auto* exportModelCmd = app.add_subcommand(
        "export-model", "Write a run's model (or an ONNX file's) as an ONNX file, as trained or folded for inference");
    exportModelCmd->add_option("model", exportModel.model, "MODEL: a run id or name whose checkpoint to export, or an .onnx file")
        ->required();
    exportModelCmd->add_option("-o,--output", exportModel.output, "The ONNX file to write: FILE.onnx")->required();
    exportModelCmd->add_flag("--folded", exportModel.folded, "Batch norm folded into the layer before it and ReLUs fused");
    exportModelCmd->add_option("--db", exportModel.db, "Run store (SQLite file)")->default_str(defaultDb);

    cli::PlanServingArgs planServing;
    auto* planServingCmd = app.add_subcommand(
        "plan-serving", "Rank serving configurations (device x instances x batch x timeout x precision) by cost per "
                        "million predictions within a p99 bound, and price precomputing a fraction in batch");
    planServingCmd->add_option("file", planServing.file, "Experiment file (JSON): the model to serve")->required();
    planServingCmd->add_option("--qps", planServing.qps, "Queries per second to answer (Poisson arrivals)")->required();
    planServingCmd->add_option("--p99", planServing.p99, "p99 latency bound: 10ms, 0.5s (default 10ms)");
    planServingCmd->add_option("--precision", planServing.precisions, "fp32, bf16, int8 (default all)")->delimiter(',');
    planServingCmd->add_option("--precompute-fraction", planServing.precompute_fraction,
                               "Fraction of predictions precomputed in batch, priced beside 0/20/50/80/100 % (default 0.2)");
    planServingCmd->add_flag("--exhaustive", planServing.exhaustive, "Simulate every configuration of the grid");
    planServingCmd->add_option("--queries", planServing.queries, "Queries simulated per configuration (default 20000)")
        ->check(CLI::Range(100, 10000000));
    planServingCmd->add_option("--top", planServing.top, "Rows shown (default 10)")->check(CLI::Range(1, 100000));
    planServingCmd->add_option("--set", planServing.overrides, "Override a key (repeatable)")->allow_extra_args(false);
    planServingCmd->add_flag("--json", planServing.json, "JSON instead of tables");
    planServingCmd->add_option("--measure", planServing.measure,
                               "MODEL (a run id or name): also measure this host's configurations with real load tests "
                               "(recorded as runs of kind serve)");
    planServingCmd->add_option("--db", planServing.db, "Run store of --measure's MODEL and its load tests")->default_str(defaultDb);
    planServingCmd->add_option("--probe", planServing.probe, "--measure: each configuration's minimum duration (default 2s)");

    cli::PlanLayoutsArgs planLayouts;
    auto* planLayoutsCmd = app.add_subcommand(
        "plan-layouts", "Rank data x pipeline x tensor layouts (micro-batches, recomputation, schedule) of a transformer "
                        "on N GPUs by step time or cost; say why the others are rejected");
    planLayoutsCmd->add_option("model", planLayouts.model, "The model: a description file (JSON, e.g. experiments/models/gpt3-175b.json) "
                                                          "or an ONNX graph (weights not needed)")->required();
    planLayoutsCmd->add_option("--device", planLayouts.device, "Catalog id of the GPU, e.g. a100-sxm4-80gb")->required();
    planLayoutsCmd->add_option("--count", planLayouts.count, "GPUs")->required()->check(CLI::Range(1, 1 << 20));
    planLayoutsCmd->add_option("--global-batch", planLayouts.global_batch, "Sequences per step (default: the model file's)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    planLayoutsCmd->add_option("--catalog", planLayouts.catalog, "Device catalog file (default: the built-in one)");
    planLayoutsCmd->add_option("--by", planLayouts.order, "Rank by time or cost")->check(CLI::IsMember({"time", "cost"}))->default_str("time");
    planLayoutsCmd->add_option("--top", planLayouts.top, "Layouts shown (default 10)")->check(CLI::Range(1, 100000));
    planLayoutsCmd->add_option("--top-rejected", planLayouts.top_rejected, "Rejected layouts shown (default 10)")->check(CLI::Range(0, 100000));
    planLayoutsCmd->add_flag("--exhaustive", planLayouts.exhaustive, "Estimate every layout (default: the fast search)");
    planLayoutsCmd->add_option("--recompute", planLayouts.recompute, "Recomputation options: none, selective, full (default all)")
        ->delimiter(',');
    planLayoutsCmd->add_option("--max-interleave", planLayouts.max_interleave, "Model chunks per GPU tried (1: 1F1B only; default 4)")
        ->check(CLI::Range(1, 64));
    planLayoutsCmd->add_option("--node-gpus", planLayouts.node_gpus, "GPUs per node sharing NVLink (default 8)")->check(CLI::Range(1, 1024));
    planLayoutsCmd->add_option("--network-gbps", planLayouts.network_gbps,
                               "Network between nodes per GPU and direction, Gbit/s (default 200: HDR InfiniBand)")
        ->check(CLI::PositiveNumber);
    planLayoutsCmd->add_flag("--shard-optimizer", planLayouts.shard_optimizer, "Divide Adam's state over the data-parallel ranks (ZeRO-1)");
    planLayoutsCmd->add_flag("--json", planLayouts.json, "JSON instead of tables");

    std::string validateFile;
    std::vector<std::string> validateOverrides;
    auto* validateCmd = app.add_subcommand("validate", "Check an experiment file (and every point of its sweep) without running it");
    validateCmd->add_option("file", validateFile, "Experiment file (JSON)")->required();
    validateCmd->add_option("--set", validateOverrides, "Override a key (repeatable)")->allow_extra_args(false);

    std::string estimateFile;
    std::vector<std::string> estimateOverrides;
    bool estimateJson = false;
    auto* estimateCmd = app.add_subcommand(
        "estimate", "Dry run on emulated devices: step time, memory, scaling, time and cost from the op graph alone "
                    "(each point of a sweep is a row)");
    estimateCmd->add_option("file", estimateFile, "Experiment file (JSON)")->required();
    estimateCmd->add_option("--set", estimateOverrides, "Override a key (repeatable)")->allow_extra_args(false);
    estimateCmd->add_flag("--json", estimateJson, "One JSON object per point instead of the table");
    std::string estimateDb = defaultDb;
    estimateCmd->add_option("--db", estimateDb, "Run store whose calibration times device.type cpu-host")
        ->default_str(defaultDb);
    bool estimateInference = false;
    std::vector<int64_t> estimateBatches{1, 8, 64, 256};
    std::vector<std::string> estimatePrecisions{"fp32", "bf16", "int8"};
    estimateCmd->add_flag("--inference", estimateInference,
                          "Serving instead of training: latency, examples/s and cost per million predictions of "
                          "the model's forward pass on each catalog device");
    estimateCmd->add_option("--batch", estimateBatches, "--inference: batch sizes, comma-separated")
        ->delimiter(',')
        ->default_str("1,8,64,256");
    estimateCmd->add_option("--precision", estimatePrecisions, "--inference: fp32, bf16, int8, comma-separated")
        ->delimiter(',')
        ->default_str("fp32,bf16,int8");
    double estimateServiceYears = 0.0, estimateUsdPerKwh = 0.0;
    auto* serviceYearsOpt =
        estimateCmd
            ->add_option("--service-years", estimateServiceYears,
                         "--inference: years a bought device's purchase is spread over (default: the catalog's)")
            ->check(CLI::PositiveNumber);
    auto* usdPerKwhOpt = estimateCmd
                             ->add_option("--usd-per-kwh", estimateUsdPerKwh,
                                          "--inference: electricity price for bought devices (default 0.16)")
                             ->check(CLI::NonNegativeNumber);

    std::string db = defaultDb, status;
    int limit = 0;
    auto* runsCmd = app.add_subcommand("runs", "List the runs in the store, newest first");
    runsCmd->add_option("--db", db, "Run store (SQLite file)")->default_str(defaultDb);
    runsCmd->add_option("--status", status, "Only runs with this status (running, completed, failed, interrupted, stopped)");
    runsCmd->add_option("-n,--limit", limit, "Show at most N runs");

    cli::TtaArgs tta;
    auto* ttaCmd = app.add_subcommand(
        "tta", "Time- and cost-to-accuracy of stored runs for any target, per run or per seed group (MLPerf's mean)");
    ttaCmd->add_option("--target", tta.target, "Test accuracy to reach: a fraction in (0, 1] such as 0.85, or 85%")->required();
    ttaCmd->add_option("--db", tta.db, "Run store (SQLite file)")->default_str(defaultDb);
    cli::addRunFilterOptions(*ttaCmd, tta.filter);
    ttaCmd->add_flag("--group-seeds", tta.group_seeds, "One row per configuration: runs that differ only by seed together");
    ttaCmd->add_flag("--json", tta.json, "JSON instead of the table");

    cli::PlanArgs plan;
    auto* planCmd = app.add_subcommand(
        "plan", "Rank configurations by time and cost to a target accuracy against a deadline and a budget");
    planCmd->add_option("--target", plan.target, "Test accuracy to reach: a fraction in (0, 1] such as 0.85, or 85%")->required();
    planCmd->add_option("--deadline", plan.deadline, "Time to reach it by: 90s, 45m, 2h, 1h30m, 1.5d");
    planCmd->add_option("--budget", plan.budget, "Money to reach it with, USD: 5, $5, 12.50");
    planCmd->add_option("--experiment", plan.experiment,
                        "A sweep (experiment file): rank its points, projecting those without runs");
    planCmd->add_option("--set", plan.overrides, "Override a key of the experiment (repeatable)")->allow_extra_args(false);
    planCmd->add_option("--db", plan.db, "Run store (SQLite file)")->default_str(defaultDb);
    cli::addRunFilterOptions(*planCmd, plan.filter);
    planCmd->add_option("--by", plan.order, "Rank by time or cost")->check(CLI::IsMember({"time", "cost"}))->default_str("time");
    planCmd->add_flag("--with-pretraining", plan.with_pretraining,
                      "Rank warm-started configurations with their pre-training added");
    planCmd->add_flag("--json", plan.json, "JSON instead of the table");

    std::string showRun;
    auto* showCmd = app.add_subcommand("show", "Summary and evaluation curve of one run");
    showCmd->add_option("run", showRun, "Run id or name")->required();
    showCmd->add_option("--db", db, "Run store (SQLite file)")->default_str(defaultDb);

    cli::ExportArgs exp;
    bool csv = false;
    auto* exportCmd = app.add_subcommand("export", "Export a run's series");
    exportCmd->add_option("run", exp.run, "Run id or name")->required();
    exportCmd->add_option("--db", exp.db, "Run store (SQLite file)")->default_str(defaultDb);
    exportCmd->add_flag("--csv", csv, "CSV output (the only format so far)")->required();
    exportCmd->add_option("--series", exp.what,
                          "steps, evals, input (per-step input-pipeline stages), replicas (per-replica step breakdown) or "
                          "updates (parameter_server: each step's update on each server, with staleness)")
        ->check(CLI::IsMember({"steps", "evals", "input", "replicas", "updates"}));
    exportCmd->add_option("-o,--output", exp.output, "Write to this file instead of standard output");

    cli::ConvertArgs conv;
    auto* convertCmd = app.add_subcommand("convert", "Convert a data set to TFRecord shards or one file per example");
    convertCmd->add_option("output", conv.output, "Output folder (created if missing)")->required();
    convertCmd->add_option("--from", conv.from, "Source format")
        ->check(CLI::IsMember({"fashion-mnist", "idx", "csv", "images", "tfrecord", "example_files"}))
        ->default_str(conv.from);
    convertCmd->add_option("--input", conv.input,
                           "IDX folder (default: Debian's Fashion-MNIST), or the source files: folder, glob or file");
    convertCmd->add_option("--split", conv.split, "Which split (IDX: both by default)")
        ->check(CLI::IsMember({"train", "test", "both"}))->default_str(conv.split);
    convertCmd->add_option("--to", conv.to, "tfrecord (shards) or files (one serialized Example per file)")
        ->check(CLI::IsMember({"tfrecord", "files"}))->default_str(conv.to);
    convertCmd->add_option("--shards", conv.shards, "Number of TFRecord files")->check(CLI::Range(1, 100000))
        ->default_str(std::to_string(conv.shards));
    convertCmd->add_option("--compression", conv.compression, "TFRecord compression")
        ->check(CLI::IsMember({"none", "zlib"}))->default_str(conv.compression);
    convertCmd->add_option("--input-compression", conv.input_compression, "Compression of TFRecord input")
        ->check(CLI::IsMember({"none", "zlib"}))->default_str(conv.input_compression);
    convertCmd->add_option("--channels", conv.channels, "Image folders: 1 = grey, 3 = RGB")->check(CLI::Range(1, 3));
    convertCmd->add_option("--limit", conv.limit, "Convert only the first N examples of each split");

    cli::ProfileArgs prof;
    auto* profileCmd = app.add_subcommand(
        "profile", "Where a run's time went, its ops on the roofline, its memory, the verdict and the actions");
    profileCmd->add_option("run", prof.run, "Run id or name")->required();
    profileCmd->add_option("--db", prof.db, "Run store (SQLite file)")->default_str(defaultDb);
    profileCmd->add_flag("--reclassify", prof.reclassify, "Classify the run again (and store the new verdict)");

    cli::ReportArgs report;
    auto* reportCmd = app.add_subcommand(
        "report", "Write a self-contained HTML page and/or a PDF report of runs: charts, verdict, ops, config, diff");
    reportCmd->add_option("runs", report.runs, "Run ids or names (two or more add the comparison)")->required();
    reportCmd->add_option("--html", report.html, "Write the HTML report to this file");
    reportCmd->add_option("--pdf", report.pdf, "Write the PDF report (A4) to this file");
    reportCmd->add_option("--db", report.db, "Run store (SQLite file)")->default_str(defaultDb);
    reportCmd->add_flag("--data-scaling", report.dataScaling,
                        "Print test error against training examples (data.fraction sweeps) with the fitted power law");
    reportCmd->add_option("--metric", report.metric, "--data-scaling: error (1 - best test accuracy) or loss (final test loss)")
        ->check(CLI::IsMember({"error", "loss"}))->default_str(report.metric);
    reportCmd->add_flag("--json", report.json, "--data-scaling as one JSON object");

    cli::ApplyArgs apply;
    auto* applyCmd = app.add_subcommand("apply", "Write a run's experiment with one of its profile actions applied");
    applyCmd->add_option("run", apply.run, "Run id or name")->required();
    applyCmd->add_option("--action", apply.action, "Action number, as `profile` lists them")->default_val(1);
    applyCmd->add_option("--db", apply.db, "Run store (SQLite file)")->default_str(defaultDb);
    applyCmd->add_option("-o,--output", apply.output, "Experiment file to write (default: <run name>-action<N>.json)");
    applyCmd->add_flag("--run", apply.runNow, "Run the new experiment at once, recording it in the same store");
    applyCmd->add_flag("-q,--quiet", apply.quiet, "With --run: no progress output");

    // quantize: wired in this one block; it runs from its callback (after parsing) and exits with its code.
    cli::QuantizeArgs quantize;
    quantize.db = defaultDb;
    auto* quantizeCmd = app.add_subcommand(
        "quantize", "Quantize a model to int8 (static, calibrated on training batches); write it as ONNX (QDQ) with its "
                    "size, test accuracy next to fp32's and calibration");
    quantizeCmd->add_option("model", quantize.model, "MODEL: a run id or name whose checkpoint to quantize")->required();
    quantizeCmd->add_option("--calibration-batches", quantize.batches, "N: training batches to calibrate on")->required();
    quantizeCmd->add_option("-o,--out", quantize.out, "The quantized model: FILE.onnx")->required();
    quantizeCmd->add_option("--calibration-batch-size", quantize.batch_size, "Examples per calibration batch (default 64)");
    quantizeCmd->add_option("--method", quantize.method, "Activation ranges: minmax (default) or percentile")
        ->check(CLI::IsMember({"minmax", "percentile"}));
    quantizeCmd->add_option("--percentile", quantize.percentile, "--method percentile: the percentile of |x| (default 99.99)");
    quantizeCmd->add_option("--seed", quantize.seed, "Seed of the calibration examples' draw from the training set (default 0)");
    quantizeCmd->add_option("--threads", quantize.threads, "Compute threads (default: the machine's cores)")->check(CLI::Range(0, 1024));
    quantizeCmd->add_option("--db", quantize.db, "Run store (SQLite file)")->default_str(defaultDb);
    quantizeCmd->callback([&quantize] {
        const int code = cli::quantizeCommand(quantize);
        std::fflush(nullptr);
        std::exit(code);
    });

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? cli::kExitOk : cli::kExitUsage;
    }
    if (run.db.empty()) run.db = defaultDb;
    if (worker.db.empty()) worker.db = defaultDb;
    if (exp.db.empty()) exp.db = defaultDb;
    if (db.empty()) db = defaultDb;
    if (prof.db.empty()) prof.db = defaultDb;
    if (apply.db.empty()) apply.db = defaultDb;
    if (report.db.empty()) report.db = defaultDb;
    if (tta.db.empty()) tta.db = defaultDb;
    if (predict.db.empty()) predict.db = defaultDb;
    if (serve.db.empty()) serve.db = defaultDb;
    if (loadtest.db.empty()) loadtest.db = defaultDb;
    if (planServing.db.empty()) planServing.db = defaultDb;
    if (plan.db.empty()) plan.db = defaultDb;

    if (*runCmd) return cli::runCommand(run, signals);
    if (*workerCmd) return cli::workerCommand(worker, signals);
    if (*lsCmd) {
        if (ls.serve) return cli::serveManifestCommand(ls);
        if (!ls.slurm && !ls.kubeflow) {
            std::fprintf(stderr, "launch-script: say --slurm, --kubeflow or --serve\n");
            return cli::kExitUsage;
        }
        return cli::launchScriptCommand(ls);
    }
    if (*predictCmd) return cli::predictCommand(predict, signals);
    if (*serveCmd) return cli::serveCommand(serve, signals);
    if (*loadtestCmd) return cli::loadtestCommand(loadtest, signals);
    if (*planServingCmd) return cli::planServingCommand(planServing, signals);
    if (*planLayoutsCmd) return cli::planLayoutsCommand(planLayouts);
    if (*exportModelCmd) return cli::exportModelCommand(exportModel);
    if (*validateCmd) return cli::validateCommand(validateFile, validateOverrides);
    if (*estimateCmd && estimateInference)
        return cli::inferenceEstimateCommand(
            estimateFile, estimateOverrides, estimateBatches, estimatePrecisions, estimateJson,
            serviceYearsOpt->count() ? std::optional<double>(estimateServiceYears) : std::nullopt,
            usdPerKwhOpt->count() ? std::optional<double>(estimateUsdPerKwh) : std::nullopt);
    if (*estimateCmd) return cli::estimateCommand(estimateFile, estimateOverrides, estimateJson, estimateDb);
    if (*runsCmd) return cli::runsCommand(db, status, limit);
    if (*ttaCmd) return cli::ttaCommand(tta);
    if (*planCmd) return cli::planCommand(plan);
    if (*showCmd) return cli::showCommand(db, showRun);
    if (*exportCmd) return cli::exportCommand(exp);
    if (*convertCmd) return cli::convertCommand(conv);
    if (*profileCmd) return cli::profileCommand(prof);
    if (*applyCmd) return cli::applyCommand(apply, signals);
    if (*reportCmd) return cli::reportCommand(report);
    return cli::kExitUsage;
}
