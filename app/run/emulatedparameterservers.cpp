#include "app/run/emulatedparameterservers.h"

#include "app/run/numbertext.h"
#include "profiler/plan/quantities.h"
#include "profiler/store/runattributes.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

std::unique_ptr<engine::ParameterServerClock> emulateParameterServers(const Experiment& x, const DevicePlan& plan,
                                                                      int64_t workerBatch, const engine::Dims& shape,
                                                                      int64_t classes, double infeed,
                                                                      const engine::MemoryCheck& memory,
                                                                      const std::function<void(const std::string&)>& say,
                                                                      profiler::RunWriter* writer) {
    auto clock = std::make_unique<engine::ParameterServerClock>(parameterServerClockConfig(plan, x, infeed), x.model,
                                                                shape, classes, x.optimizer);
    const engine::ParameterServerStep& s = clock->stepCost(workerBatch);
    const int w = plan.replicas, k = plan.parameter_servers;
    say("emulating " + plan.devices + " (" + std::to_string(w) + " worker" + (w == 1 ? "" : "s") + ", one " +
        plan.spec.replicaLabel() + " each on its own host, " + engine::precisionName(plan.precision) + ", batch " +
        std::to_string(workerBatch) + "; " + std::to_string(k) + " parameter server" + (k == 1 ? "" : "s") + "; " +
        profiler::shortestNumber(x.device.network_gbps) + " Gbit/s links): a worker's step takes " + millis(s.worker_s) +
        " virtual (pull " + millis(s.pull_s) + ", forward " + millis(s.forward_s) + ", backward " +
        millis(s.backward_s) + ", push " + millis(s.push_s) + ", update on the servers " + millis(s.update_s) +
        ", overhead " + millis(s.overhead_s) + ", input wait " + millis(s.input_s) + "); the job's step " +
        millis(s.jobStep().seconds()));
    if (s.bound == engine::PsBound::ServerLinks)
        say("note: the parameter servers are the bottleneck: per round of " + std::to_string(w) + " steps each server's "
            "link carries " + std::to_string(w) + " x 1/" + std::to_string(k) + " of the parameters each way, " +
            millis(s.server_link_s) + " against a worker's " + millis(s.worker_s) + "; every worker waits " +
            millis(s.queue_s) + " a step (more parameter servers or a faster network would help)");
    else if (s.bound == engine::PsBound::ServerUpdates)
        say("note: the parameter servers are the bottleneck: " + std::to_string(w) + " updates per round on each "
            "server take " + millis(s.server_update_s) + " against a worker's " + millis(s.worker_s) +
            "; every worker waits " + millis(s.queue_s) + " a step (more parameter servers would help)");
    if (memory.near_capacity) say("note: " + memory.message);
    if (writer)
        writer->attributes({{runattr::kVirtualDevice, plan.spec.id},
                            {runattr::kVirtualReplicas, std::to_string(w)},
                            {runattr::kVirtualPrecision, engine::precisionName(plan.precision)},
                            {runattr::kVirtualTopology, std::to_string(w) + " workers, " + std::to_string(k) +
                                                            " parameter server(s), one link per host"},
                            {runattr::kVirtualNetworkGbps, profiler::shortestNumber(x.device.network_gbps)},
                            {runattr::kVirtualNetworkLatencyUs, profiler::shortestNumber(x.device.network_latency_us)},
                            {runattr::kVirtualPsMemoryGbs, profiler::shortestNumber(x.device.ps_memory_gbs)},
                            {runattr::kVirtualInfeedSecondsPerBatch, profiler::shortestNumber(infeed)},
                            {runattr::kVirtualStepSeconds, profiler::shortestNumber(s.jobStep().seconds())},
                            {runattr::kVirtualWorkerStepSeconds, profiler::shortestNumber(s.worker_s)},
                            {runattr::kVirtualRoundSeconds, profiler::shortestNumber(s.round_s)},
                            {runattr::kVirtualPsBound, engine::psBoundName(s.bound)},
                            {runattr::kVirtualMatrixUtilisation, profiler::shortestNumber(s.matrix_utilisation)},
                            {runattr::kVirtualMemoryFraction, profiler::shortestNumber(memory.fraction)}});
    return clock;
}

}  // namespace trainbench::app
