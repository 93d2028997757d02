#include "engine/emulation/parameterserverclock.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "engine/emulation/collectivemodel.h"

namespace trainbench::engine {

namespace {

VirtualClockConfig deviceConfig(const ParameterServerClockConfig& c) {
    VirtualClockConfig d;
    d.device = c.device;
    d.precision = c.precision;
    d.replicas = 1;  // a worker is one device; its exchange is timed here, not as an all-reduce
    return d;
}

const ParameterServerClockConfig& checked(const ParameterServerClockConfig& c) {
    if (c.workers < 1) throw std::invalid_argument("parameter-server clock: workers must be at least 1");
    if (c.servers < 1) throw std::invalid_argument("parameter-server clock: servers must be at least 1");
    if (!(c.network.beta_s_per_byte > 0.0) || !std::isfinite(c.network.beta_s_per_byte) || c.network.alpha_s < 0.0)
        throw std::invalid_argument("parameter-server clock: the network link needs a bandwidth > 0 and a latency >= 0");
    if (!(c.server_memory_bytes_per_s > 0.0))
        throw std::invalid_argument("parameter-server clock: the servers' memory bandwidth must be > 0");
    return c;
}

}  // namespace

std::string psBoundName(PsBound bound) {
    switch (bound) {
    case PsBound::Workers: return "workers";
    case PsBound::ServerLinks: return "server links";
    case PsBound::ServerUpdates: return "server updates";
    }
    return "";
}

VirtualStep ParameterServerStep::jobStep() const {
    const double w = workers;
    VirtualStep v;
    v.input_s = input_s / w;
    v.forward_s = forward_s / w;
    v.backward_s = backward_s / w;
    v.optimizer_s = update_s / w;
    v.comm_s = (pull_s + push_s) / w;
    v.exposed_comm_s = (pull_s + push_s + queue_s) / w;
    v.overhead_s = overhead_s / w;
    v.matrix_utilisation = matrix_utilisation;
    return v;
}

ParameterServerClock::ParameterServerClock(ParameterServerClockConfig config, ModelSpec model, Dims sampleShape,
                                           int64_t numClasses, OptimizerConfig optimizer)
    : config_(checked(config)),
      device_(deviceConfig(config_), std::move(model), std::move(sampleShape), numClasses, optimizer) {}

const ParameterServerStep& ParameterServerClock::stepCost(int64_t batch) {
    if (auto it = steps_.find(batch); it != steps_.end()) return it->second;
    const StepTiming& t = device_.replicaTiming(batch);
    const OpGraph& graph = device_.replicaGraph(batch);
    const double w = config_.workers, k = config_.servers;
    ParameterServerStep s;
    s.workers = config_.workers;
    s.forward_s = t.forward_s;
    s.backward_s = t.backward_s;
    s.overhead_s = t.overhead_s;
    s.matrix_utilisation = t.matrix_utilisation;
    // The K servers send (and take) their shards at once, but all of it crosses the worker's own
    // link: one latency and P bytes each way.
    const double params = graph.params_bytes;
    s.pull_s = pointToPointSeconds(config_.network, params);
    s.push_s = pointToPointSeconds(config_.network, params);
    // The optimizer's update, fp32 parameters and state, streams through each server's memory for its
    // 1/K of the variables (an update moves a few bytes per FLOP: bandwidth-bound on any CPU).
    double updateBytes = 0.0;
    for (const OpDesc& op : graph.ops)
        if (op.part == StepPart::Optimizer) updateBytes += op.cost.bytes * static_cast<double>(op.calls);
    s.update_s = updateBytes / (k * config_.server_memory_bytes_per_s);
    const double busy = s.pull_s + s.forward_s + s.backward_s + s.push_s + s.update_s + s.overhead_s;
    s.input_s = config_.infeed_prefetch ? std::max(0.0, config_.infeed_seconds_per_batch - busy)
                                        : config_.infeed_seconds_per_batch;
    s.worker_s = s.input_s + busy;
    // Per round every worker pulls and pushes once: W·P/K bytes each way through each server's link
    // (full duplex: pulls and pushes do not share a direction), and W updates on each server.
    s.server_link_s = w * params / k * config_.network.beta_s_per_byte;
    s.server_update_s = w * s.update_s;
    s.round_s = s.worker_s;
    if (s.server_link_s > s.round_s) {
        s.round_s = s.server_link_s;
        s.bound = PsBound::ServerLinks;
    }
    if (s.server_update_s > s.round_s) {
        s.round_s = s.server_update_s;
        s.bound = PsBound::ServerUpdates;
    }
    s.queue_s = s.round_s - s.worker_s;
    return steps_.emplace(batch, s).first->second;
}

void ParameterServerClock::step(StepRecord& rec) {
    const ParameterServerStep& s = stepCost(rec.samples);
    chargeStep(rec, s.jobStep());
    // The worker that ran the step: its own pull and push, and its wait for the servers.
    rec.comm_seconds = s.pull_s + s.push_s;
    rec.wait_seconds = s.queue_s;
    for (ReplicaStep& r : rec.replicas) {
        r.compute_seconds = s.forward_s + s.backward_s;
        r.forward_seconds = s.forward_s;
        r.backward_seconds = s.backward_s;
        r.optimizer_seconds = s.update_s;
        r.comm_seconds = s.pull_s + s.push_s;
        r.exposed_comm_seconds = s.pull_s + s.push_s + s.queue_s;
        r.wait_seconds = s.queue_s;
    }
}

void ParameterServerClock::eval(EvalRecord& rec) { device_.eval(rec); }

}  // namespace trainbench::engine
