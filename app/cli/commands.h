#pragma once
// The subcommands of trainbench-cli. Each returns the process exit code (see exitcodes.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/runfilter.h"

namespace trainbench::cli {

struct RunArgs {
    std::string file;
    std::string db;
    std::vector<std::string> overrides;
    bool quiet = false;
    std::string trace;                 // --trace FILE: Chrome trace of a window of steps
    std::string traceSteps = "21:30";  // --trace-steps FIRST:LAST (inclusive)
};
class StopSignals;
int runCommand(const RunArgs& args, const StopSignals& signals);
// One task of a multi_worker or parameter_server job: TF_CONFIG and the job token from the environment.
int workerCommand(const RunArgs& args, const StopSignals& signals);
// The environment variable that carries a job's token to its tasks (never the command line, which
// other users of the machine can read).
inline constexpr const char* kJobTokenVariable = "TRAINBENCH_JOB_TOKEN";
// Set by the launcher when it restarts a failed job: the tasks resume from train.checkpoint_path.
inline constexpr const char* kJobRestartsVariable = "TRAINBENCH_JOB_RESTARTS";
// Set by the local launcher to its pid: its tasks (in process groups of their own, so that a Ctrl-C
// reaches only the launcher) are asked to stop if it dies.
inline constexpr const char* kJobLauncherVariable = "TRAINBENCH_JOB_LAUNCHER";
}  // namespace trainbench::cli
namespace trainbench::app {
struct Experiment;
}
namespace trainbench::cli {
// Starts the tasks of a multi_worker or parameter_server job as `trainbench-cli worker` processes on
// loopback and waits for them; restarts them from the last checkpoint when the job fails.
int launchLocalJob(const RunArgs& args, const app::Experiment& experiment, const StopSignals& signals);
struct LaunchScriptArgs {
    std::string file;
    std::vector<std::string> overrides;
    bool slurm = false, kubeflow = false;
    int workers = 0;              // 0: strategy.replicas
    int port = 2222;              // TFJob's default port
    std::string db = "runs.db";   // where the chief records, on its host
    std::string image = "trainbench:latest";
    std::string output;           // empty: stdout
    // --serve: `file` is MODEL as the container sees it; a Deployment of `replicas` servers and a Service.
    bool serve = false;
    int replicas = 1;
    std::string modelName;                // empty: MODEL's file name without its extension
    std::string modelClaim;               // a PersistentVolumeClaim mounted read-only at MODEL's folder
    std::string cpu = "2";                // each replica's CPU request and limit
    std::vector<std::string> serveArgs;   // more `serve` options, e.g. --max-batch-size=32
    bool noAuth = false;                  // no token Secret: the Service answers anyone in the cluster
};
int launchScriptCommand(const LaunchScriptArgs& args);
int serveManifestCommand(const LaunchScriptArgs& args);
// A Kubernetes Secret named `quotedName` (a YAML scalar already) holding a fresh random token under
// the key "token", followed by the document separator: the manifests' one token Secret.
std::string tokenSecretDocument(const std::string& quotedName);
// Batch prediction with a stored run's model over a data split, recorded as a run (docs/cli.md).
struct PredictArgs {
    std::string model;
    std::string db;
    std::vector<std::string> overrides;  // --set data.*
    std::string split = "test";
    std::string out;
    int64_t batch_size = 256;
    int threads = 0;
    std::string name;
    bool quiet = false;
    int replicas = 1;
    std::string replica;  // "I/N": this process is a replica of a --replicas run (internal)
};
int predictCommand(const PredictArgs& args, const StopSignals& signals);
// export-model: MODEL (a run or an ONNX file) written as an ONNX file, as trained or folded (docs/onnx.md).
struct ExportModelArgs {
    std::string model;
    std::string output;   // FILE.onnx
    bool folded = false;  // batch norm folded and ReLUs fused, as the inference commands run it
    std::string db;
};
int exportModelCommand(const ExportModelArgs& args);
// Static post-training int8 of a model, calibrated on training batches, written as an ONNX QDQ file
// with its size, test accuracy next to fp32's and calibration (docs/cli.md).
struct QuantizeArgs {
    std::string model;
    std::string db;
    std::string out;
    int64_t batches = 0;       // --calibration-batches (required)
    int64_t batch_size = 64;   // --calibration-batch-size
    std::string method = "minmax";
    double percentile = 99.99;
    uint64_t seed = 0;
    int threads = 0;
};
int quantizeCommand(const QuantizeArgs& args);
int validateCommand(const std::string& file, const std::vector<std::string>& overrides);
// A dry run on the experiment's emulated devices, every sweep point a row; 1 when a point does not fit.
int estimateCommand(const std::string& file, const std::vector<std::string>& overrides, bool asJson,
                    const std::string& db);
// estimate --inference: the model's forward pass per catalog device x precision x batch (docs/devices.md).
// A bought device is priced with `serviceYears` and `usdPerKwh` when given (else the catalog's life and
// engine::kDefaultUsdPerKwh).
int inferenceEstimateCommand(const std::string& file, const std::vector<std::string>& overrides,
                             const std::vector<int64_t>& batches, const std::vector<std::string>& precisions,
                             bool asJson, std::optional<double> serviceYears, std::optional<double> usdPerKwh);

// plan-serving: serving configurations ranked by cost per million predictions within a p99 bound.
struct PlanServingArgs {
    std::string file;
    std::vector<std::string> overrides;
    double qps = 0.0;
    std::string p99 = "10ms";
    std::vector<std::string> precisions = {"fp32", "bf16", "int8"};
    double precompute_fraction = 0.2;
    bool exhaustive = false;
    int64_t queries = 20000;
    int top = 10;
    bool json = false;
    std::string measure;   // MODEL (a run of db): also measure this host's configurations with real load tests
    std::string db;
    std::string probe = "2s";  // each measured configuration's minimum duration
};
class StopSignals;
int planServingCommand(const PlanServingArgs& args, const StopSignals& signals);

// plan-layouts: data x pipeline x tensor layouts of a transformer on N GPUs, those that fit memory
// ranked by step time or cost, the rejected ones with why (docs/model-parallelism.md).
struct PlanLayoutsArgs {
    std::string model;                 // a description file (JSON) or an .onnx graph
    std::string device;                // a catalog id
    std::string catalog;               // a catalog file; empty: the built-in one
    int count = 0;                     // GPUs
    int64_t global_batch = 0;          // 0: the model file's
    std::string order = "time";        // time | cost
    int top = 10;
    int top_rejected = 10;
    bool exhaustive = false;
    std::vector<std::string> recompute = {"none", "selective", "full"};
    int max_interleave = 4;
    int node_gpus = 8;
    double network_gbps = 200.0;       // per GPU, each direction
    bool shard_optimizer = false;
    bool json = false;
};
int planLayoutsCommand(const PlanLayoutsArgs& args);

int runsCommand(const std::string& db, const std::string& status, int limit);

// Time- and cost-to-accuracy of stored runs for any target (docs/time-to-accuracy.md).
struct TtaArgs {
    std::string db;
    std::string target;      // "0.85" or "85%"
    RunFilter filter;
    bool group_seeds = false;
    bool json = false;
};
int ttaCommand(const TtaArgs& args);

// Ranks configurations by time and cost to a target against a deadline and a budget.
struct PlanArgs {
    std::string db;
    std::string target;
    std::string deadline;                // "2h", "1h30m"; empty: none
    std::string budget;                  // "5", "$5"; empty: none
    std::string experiment;              // a sweep whose points without runs are projected; empty: none
    std::vector<std::string> overrides;  // --set, for the experiment
    RunFilter filter;
    std::string order = "time";          // time | cost
    bool with_pretraining = false;       // warm-started groups ranked with their pre-training
    bool json = false;
};
int planCommand(const PlanArgs& args);
int showCommand(const std::string& db, const std::string& run);
struct ExportArgs {
    std::string db;
    std::string run;
    std::string what = "steps";  // steps | evals
    std::string output;          // empty: stdout
};
int exportCommand(const ExportArgs& args);

struct ProfileArgs {
    std::string db;
    std::string run;
    bool reclassify = false;  // classify again instead of showing the stored verdict
};
int profileCommand(const ProfileArgs& args);

// A self-contained HTML page and/or an A4 PDF of one or more runs (profiler/report).
struct ReportArgs {
    std::string db;
    std::vector<std::string> runs;  // ids or names, in the report's order
    std::string html;               // empty: no HTML
    std::string pdf;                // empty: no PDF
    bool dataScaling = false;       // print error (or loss) against training examples, and the power law
    std::string metric = "error";   // --data-scaling: "error" (1 - best test accuracy) or "loss" (final test loss)
    bool json = false;              // --data-scaling as JSON
};
int reportCommand(const ReportArgs& args);

struct ApplyArgs {
    std::string db;
    std::string run;
    int action = 1;      // 1-based, as `profile` numbers them
    std::string output;  // empty: <run name>-action<N>.json in the current folder
    bool runNow = false; // and run it (recorded in the same store)
    bool quiet = false;
};
class StopSignals;
int applyCommand(const ApplyArgs& args, const StopSignals& signals);

struct ConvertArgs {
    std::string from = "fashion-mnist";  // fashion-mnist | idx | csv | images | tfrecord | example_files
    std::string input;                   // IDX folder, or the files (folder, glob, file)
    std::string split = "both";          // train | test | both (IDX only)
    std::string to = "tfrecord";         // tfrecord | files
    int64_t shards = 16;
    std::string compression = "none";    // output TFRecord compression
    std::string input_compression = "none";
    int channels = 1;                    // image folders: 1 or 3
    int64_t limit = 0;
    std::string output;
};
int convertCommand(const ConvertArgs& args);

}  // namespace trainbench::cli
