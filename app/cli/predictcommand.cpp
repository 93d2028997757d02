// `trainbench-cli predict`: batch prediction with a trained model, recorded as a run.
#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/stopsignals.h"
#include "app/experiment/experimenterror.h"
#include "app/predict/predictrun.h"
#include "app/run/exitcodes.h"
#include "engine/onnx/onnxerror.h"
#include "engine/util/errors.h"
#include "profiler/format/numberformat.h"
#include "profiler/store/storeerror.h"

namespace trainbench::cli {

int predictCommand(const PredictArgs& args, const StopSignals& signals) {
    app::PredictRequest r;
    r.model = args.model;
    r.db = args.db;
    r.overrides = args.overrides;
    r.split = args.split;
    r.out = args.out;
    r.batch_size = args.batch_size;
    r.threads = args.threads;
    r.name = args.name;
    r.stop = &signals.requested();
    r.replicas = args.replicas;
    if (!args.replica.empty()) {
        const size_t slash = args.replica.find('/');
        try {
            size_t used = 0;
            r.replica = std::stoi(args.replica.substr(0, slash), &used);
            r.replicas = std::stoi(args.replica.substr(slash + 1));
            if (slash == std::string::npos || used != slash || r.replica < 0 || r.replica >= r.replicas)
                throw std::invalid_argument("");
        } catch (const std::exception&) {
            std::fprintf(stderr, "predict: --replica %s: say I/N with 0 <= I < N\n", args.replica.c_str());
            return kExitUsage;
        }
    }
    if (!args.quiet) r.log = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
    app::PredictOutcome o;
    try {
        o = app::runPrediction(r);
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "predict: %s\n", e.what());
        return kExitUsage;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "predict: %s\n", e.what());
        return kExitUsage;
    } catch (const engine::onnx::OnnxError& e) {  // MODEL is a file that is not a model we can run
        std::fprintf(stderr, "predict: %s\n", e.what());
        return kExitUsage;
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "predict: %s\n", e.what());
        return kExitStore;
    } catch (const engine::FileWriteError& e) {
        std::fprintf(stderr, "predict: %s\n", e.what());
        return kExitIo;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "predict: %s\n", e.what());
        return kExitRunFailed;
    }
    if (r.replica >= 0) return o.status == profiler::RunStatus::Stopped ? kExitStopped : kExitOk;
    std::printf("run %lld (predict): %s\n", static_cast<long long>(o.id.value),
                std::string(profiler::runStatusName(o.status)).c_str());
    if (!o.message.empty()) std::printf("  %s\n", o.message.c_str());
    if (o.status == profiler::RunStatus::Failed) return kExitRunFailed;
    std::printf("  %lld examples in %s: %.0f examples/s; top-1 %.2f %% against the %s labels\n",
                static_cast<long long>(o.examples), profiler::clockTime(o.seconds).c_str(), o.examples_per_second,
                100 * o.accuracy, args.split.c_str());
    if (o.status == profiler::RunStatus::Completed) {
        if (r.replicas > 1)
            std::printf("  predictions in %s ... %s (one file per replica)\n", app::replicaOutput(args.out, 0, r.replicas).c_str(),
                        app::replicaOutput(args.out, r.replicas - 1, r.replicas).c_str());
        else
            std::printf("  predictions in %s\n", args.out.c_str());
    }
    if (!o.verdict.empty())
        std::printf("  verdict: %s\n  (trainbench-cli profile %lld --db %s)\n", o.verdict.c_str(),
                    static_cast<long long>(o.id.value), args.db.c_str());
    return o.status == profiler::RunStatus::Stopped ? kExitStopped : kExitOk;
}

}  // namespace trainbench::cli
