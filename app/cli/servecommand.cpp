// `trainbench-cli serve MODEL`: TensorFlow Serving's REST API for a trained run, with dynamic
// batching, until Ctrl-C (docs/serving.md).
#include <chrono>
#include <cstdio>
#include <thread>

#include "app/cli/servecommands.h"
#include "app/cli/stopsignals.h"
#include "app/experiment/experimenterror.h"
#include "app/inference/servedmodel.h"
#include "app/run/exitcodes.h"
#include "engine/graph/graph.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/serving/servingserver.h"
#include "engine/util/errors.h"
#include "profiler/format/numberformat.h"

namespace trainbench::cli {

namespace {

bool isLoopback(const std::string& address) {
    return address == "127.0.0.1" || address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

}  // namespace

int serveCommand(const ServeArgs& args, const StopSignals& signals) {
    engine::serving::ServingOptions options;
    app::ServedModel model;
    try {
        options = servingOptions(args.serving);
        if (!args.serving.modelName.empty())
            if (std::string e = checkModelName(args.serving.modelName); !e.empty())
                throw std::invalid_argument("--model-name: " + e);
        app::ServedModelOptions m;
        m.name = args.serving.modelName;
        m.precision = args.serving.precision;
        m.calibration_batches = args.serving.calibrationBatches;
        m.threads_per_instance = args.serving.threadsPerInstance;
        m.max_batch = args.serving.maxBatchSize;
        if (!args.quiet) std::printf("opening %s ...\n", args.model.c_str());
        std::fflush(stdout);
        model = app::openServedModel(args.model, args.db, m);
        if (std::string e = checkModelName(model.servable.name); !e.empty())
            throw std::invalid_argument(e + "; give one with --model-name");
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "serve: %s\n", e.what());
        return kExitUsage;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "serve: %s\n", e.what());
        return kExitUsage;
    } catch (const engine::DataError& e) {
        std::fprintf(stderr, "serve: %s\n", e.what());
        return kExitRunFailed;
    } catch (const engine::graph::GraphError& e) {
        std::fprintf(stderr, "serve: %s\n", e.what());
        return kExitRunFailed;
    }

    std::unique_ptr<engine::serving::ServingServer> server;
    try {
        server = std::make_unique<engine::serving::ServingServer>(model.servable, options);
        server->start();
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "serve: %s\n", e.what());
        return kExitUsage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "serve: %s\n", e.what());
        return kExitRunFailed;
    }
    const engine::serving::ServingOptions& used = server->options();
    const std::string url = "http://" + server->address() + "/v1/models/" + model.servable.name;
    if (!args.quiet) {
        std::printf("serving %s\n  as %s (%s, weights %s", model.source.description.c_str(), url.c_str(),
                    model.precision.c_str(), profiler::fmtBytes(static_cast<double>(model.weight_bytes)).c_str());
        if (model.precision != "fp32")
            std::printf(", %.2fx smaller than fp32; calibrated on %s", double(model.fp32_weight_bytes) / double(model.weight_bytes),
                        model.calibration.c_str());
        std::printf(")\n  batching: %s; instances %lld x %d thread(s); request threads %lld\n",
                    used.batching.describe().c_str(), static_cast<long long>(used.instances),
                    args.serving.threadsPerInstance, static_cast<long long>(used.request_threads));
        std::string shape;
        for (int64_t d : model.servable.inputShape) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
        std::printf("  an instance is %s numbers (pixels as stored); the answer is %lld logits\n", shape.c_str(),
                    static_cast<long long>(model.servable.outputs));
        std::printf("  metrics: http://%s/metrics; Ctrl-C stops\n", server->address().c_str());
        for (const std::string& n : server->notes()) std::printf("  note: %s\n", n.c_str());
        if (!isLoopback(used.bind_address) && used.auth_token.empty())
            std::printf("  warning: listening on %s without --auth-token-file: anyone who can reach this port can use the model\n",
                        used.bind_address.c_str());
    }
    std::fflush(stdout);
    if (!args.readyFile.empty()) {
        try {
            engine::writeFileAtomically(args.readyFile, url + "\n");
        } catch (const std::exception& e) {
            std::fprintf(stderr, "serve: --ready-file: %s\n", e.what());
            server->stop();
            return kExitIo;
        }
    }
    while (!signals.requested().load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    server->stop();
    if (!args.quiet) {
        const auto& metrics = server->metrics();
        std::printf("stopped: %lld requests answered 200, %lld refused with 503, %lld bad requests (400)\n",
                    static_cast<long long>(metrics.responses(200)), static_cast<long long>(metrics.responses(503)),
                    static_cast<long long>(metrics.responses(400)));
    }
    return kExitOk;
}

}  // namespace trainbench::cli
