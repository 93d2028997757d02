#include "app/run/emulatedparameterservers.h"

#include "profiler/format/numberformat.h"

namespace trainbench::app {

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
        profiler::shortestNumber(x.device.network_gbps) + " Gbit/s links): a worker's step takes " + profiler::millis(s.worker_s) +
        " virtual (pull " + profiler::millis(s.pull_s) + ", forward " + profiler::millis(s.forward_s) + ", backward " +
        profiler::millis(s.backward_s) + ", push " + profiler::millis(s.push_s) + ", update on the servers " + profiler::millis(s.update_s) +
        ", overhead " + profiler::millis(s.overhead_s) + ", input wait " + profiler::millis(s.input_s) + "); the job's step " +
        profiler::millis(s.jobStep().seconds()));
    if (s.bound == engine::PsBound::ServerLinks)
        say("note: the parameter servers are the bottleneck: per round of " + std::to_string(w) + " steps each server's "
            "link carries " + std::to_string(w) + " x 1/" + std::to_string(k) + " of the parameters each way, " +
            profiler::millis(s.server_link_s) + " against a worker's " + profiler::millis(s.worker_s) + "; every worker waits " +
            profiler::millis(s.queue_s) + " a step (more parameter servers or a faster network would help)");
    else if (s.bound == engine::PsBound::ServerUpdates)
        say("note: the parameter servers are the bottleneck: " + std::to_string(w) + " updates per round on each "
            "server take " + profiler::millis(s.server_update_s) + " against a worker's " + profiler::millis(s.worker_s) +
            "; every worker waits " + profiler::millis(s.queue_s) + " a step (more parameter servers would help)");
    if (memory.near_capacity) say("note: " + memory.message);
    if (writer)
        writer->attributes({{"virtual.device", plan.spec.id},
                            {"virtual.replicas", std::to_string(w)},
                            {"virtual.precision", engine::precisionName(plan.precision)},
                            {"virtual.topology", std::to_string(w) + " workers, " + std::to_string(k) +
                                                     " parameter server(s), one link per host"},
                            {"virtual.network_gbps", profiler::shortestNumber(x.device.network_gbps)},
                            {"virtual.network_latency_us", profiler::shortestNumber(x.device.network_latency_us)},
                            {"virtual.ps_memory_gbs", profiler::shortestNumber(x.device.ps_memory_gbs)},
                            {"virtual.infeed_seconds_per_batch", profiler::shortestNumber(infeed)},
                            {"virtual.step_seconds", profiler::shortestNumber(s.jobStep().seconds())},
                            {"virtual.worker_step_seconds", profiler::shortestNumber(s.worker_s)},
                            {"virtual.round_seconds", profiler::shortestNumber(s.round_s)},
                            {"virtual.ps_bound", engine::psBoundName(s.bound)},
                            {"virtual.matrix_utilisation", profiler::shortestNumber(s.matrix_utilisation)},
                            {"virtual.memory_fraction", profiler::shortestNumber(memory.fraction)}});
    return clock;
}

}  // namespace trainbench::app
