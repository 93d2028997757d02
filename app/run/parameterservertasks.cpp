#include "app/run/parameterservertasks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "engine/onnx/onnxtrainable.h"
#include "engine/strategy/parameterserver.h"
#include "engine/strategy/psworker.h"
#include "profiler/format/numberformat.h"
#include "profiler/store/runattributes.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

namespace {

// A parameter server of a parameter_server job: serves its shard until the coordinator says the
// job is over. It records nothing; the chief does.
RunOutcome serveParameters(const RunRequest& request) {
    const Experiment& x = request.experiment;
    const engine::ClusterSpec& cluster = *request.cluster;
    engine::ParameterServerConfig c;
    c.host = cluster.self().host;
    c.port = static_cast<uint16_t>(cluster.self().port);
    c.token = request.jobToken;
    c.index = static_cast<uint32_t>(cluster.task_index);
    c.optimizer = x.optimizer;
    c.timeout = std::chrono::milliseconds(static_cast<int64_t>(x.strategy.timeout_s * 1000));
    c.connectTimeout = std::max(c.timeout, std::chrono::milliseconds(60'000));  // as a worker's
    engine::ParameterServer server(c);
    if (request.log)
        request.log("parameter server " + std::to_string(cluster.task_index) + " listening on " + cluster.self().text());
    RunOutcome out;
    try {
        out.status = server.waitUntilDone(request.stop) ? profiler::RunStatus::Completed : profiler::RunStatus::Stopped;
    } catch (const std::exception& e) {
        out.message = e.what();
    }
    return out;
}

// A worker of a parameter_server job: trains the steps the coordinator hands it until it is told
// the job is over.
RunOutcome trainSteps(const RunRequest& request, const Placement& place) {
    const Experiment& x = request.experiment;
    const engine::ClusterSpec& cluster = *request.cluster;
    engine::PsWorkerConfig c;
    c.coordinatorHost = cluster.coordinator().host;
    c.coordinatorPort = cluster.coordinator().port;
    c.token = request.jobToken;
    c.index = static_cast<uint32_t>(cluster.task_index);
    c.threads = place.threadsPerReplica;
    c.model = engine::onnx::trainableModel(x.model);  // the data's shape comes later, from the coordinator
    c.seed = x.train.seed;
    c.timeout = std::chrono::milliseconds(static_cast<int64_t>(x.strategy.timeout_s * 1000));
    c.connectTimeout = std::max(c.timeout, std::chrono::milliseconds(60'000));
    RunOutcome out;
    try {
        const engine::PsWorkerSummary done = engine::runParameterServerWorker(c, request.log);
        out.summary.steps = done.steps;
        out.status = profiler::RunStatus::Completed;
    } catch (const std::exception& e) {
        out.message = e.what();
    }
    return out;
}

}  // namespace

std::optional<RunOutcome> runParameterServerTask(const RunRequest& request, const Placement& place) {
    const engine::ClusterSpec& c = *request.cluster;
    if (c.chief.empty())
        throw std::invalid_argument("a parameter_server job needs a chief task: it coordinates the workers");
    if (c.ps.empty()) throw std::invalid_argument("a parameter_server job needs at least one ps task");
    if (c.worker.empty()) throw std::invalid_argument("a parameter_server job needs at least one worker task");
    if (c.task_type == "ps") return serveParameters(request);
    if (c.task_type == "worker") return trainSteps(request, place);
    if (c.task_type != "chief")
        throw std::invalid_argument("this task is a '" + c.task_type + "' task; a parameter_server job has chief, "
                                    "worker and ps tasks");
    return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> parameterServerAttributes(const engine::ParameterServerStats& st,
                                                                           size_t servers) {
    std::vector<int64_t> v = st.staleness;
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v.empty() ? 0 : v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]; };
    double sum = 0;
    for (int64_t x : v) sum += static_cast<double>(x);
    return {{runattr::kPsServers, std::to_string(servers)},
            {runattr::kPsUpdates, std::to_string(v.size())},
            {runattr::kPsStalenessMean, profiler::shortestNumber(v.empty() ? 0.0 : std::round(100 * sum / static_cast<double>(v.size())) / 100)},
            {runattr::kPsStalenessP50, std::to_string(at(0.5))},
            {runattr::kPsStalenessP95, std::to_string(at(0.95))},
            {runattr::kPsStalenessMax, std::to_string(v.empty() ? 0 : v.back())},
            {runattr::kPsRescheduledSteps, std::to_string(st.rescheduled_steps)},
            {runattr::kPsLostWorkers, std::to_string(st.lost_workers)}};
}

}  // namespace trainbench::app
