#include "app/run/emulatedrun.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "app/run/splitadvice.h"
#include "engine/data/pipeline/datasource.h"
#include "engine/emulation/opgraph.h"
#include "profiler/format/numberformat.h"
#include "profiler/machine/infeedcache.h"
#include "profiler/store/runattributes.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

namespace {

// The host's time to make one global batch with a pipeline of its own.
double measureInfeed(const Experiment& x, int64_t globalBatch) {
    engine::TrainingData probe = engine::openTrainingData(x.data, globalBatch, x.train.seed);
    probe.train->startEpoch(0);
    // The median of 30 batches after 2 of warm-up: a batch delayed by another process on the host
    // (an OpenMP region waiting for a descheduled thread) does not become the rate.
    std::vector<double> seconds;
    for (int i = 0; i < 32; ++i) {
        const auto t = std::chrono::steady_clock::now();
        if (probe.train->next().count == 0) break;
        if (i >= 2) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
    }
    if (seconds.empty()) return 0.0;
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
}

}  // namespace

profiler::InfeedRate infeedOf(const Experiment& x, int64_t globalBatch, const std::string& dbPath) {
    if (x.device.infeed_seconds_per_batch > 0) return {x.device.infeed_seconds_per_batch, "", false};
    const std::string pipeline = x.resolved.contains("data") ? x.resolved["data"].dump() : std::string("{}");
    return profiler::infeedRateFor(dbPath, pipeline, globalBatch, [&] { return measureInfeed(x, globalBatch); });
}

engine::MemoryCheck memoryOnDevice(const Experiment& x, const DevicePlan& plan, int64_t globalBatch,
                                   const engine::Dims& shape, int64_t classes) {
    if (plan.pipeline_link) {
        // Each stage on its own device: the stage that keeps the most is the one that must fit.
        const engine::VirtualClockConfig c = virtualClockConfig(plan, x, 0.0);
        const engine::PipelineStepCost cost = engine::pipelineStepCost(x.model, shape, classes, globalBatch, x.optimizer,
                                                                       plan.spec, plan.precision, *c.pipeline);
        size_t worst = 0;
        for (size_t k = 1; k < cost.memory.size(); ++k)
            if (cost.memory[k].total() > cost.memory[worst].total()) worst = k;
        engine::OpGraph stage;
        stage.params_bytes = cost.memory[worst].params_bytes;
        stage.grads_bytes = cost.memory[worst].grads_bytes;
        stage.optimizer_bytes = cost.memory[worst].optimizer_bytes;
        stage.activation_bytes = cost.memory[worst].activation_bytes;
        engine::MemoryCheck memory = engine::checkMemory(stage, plan.spec, plan.precision);
        if (!memory.message.empty())
            memory.message = "pipeline stage " + std::to_string(worst) + " of " + std::to_string(cost.memory.size()) +
                             ": " + memory.message;
        return memory;
    }
    engine::OpGraph graph = engine::trainingStepGraph(x.model, shape, classes, plan.replicaBatch(globalBatch), x.optimizer);
    if (plan.parameter_servers > 0) graph.optimizer_bytes = 0.0;  // the optimizer state is on the servers
    return engine::checkMemory(graph, plan.spec, plan.precision);
}

engine::MemoryCheck fitOnDevice(const Experiment& x, const DevicePlan& plan, int64_t globalBatch,
                                const engine::Dims& shape, int64_t classes) {
    engine::MemoryCheck memory = memoryOnDevice(x, plan, globalBatch, shape, classes);
    if (!memory.fits)
        throw std::runtime_error(memory.message + splitAdvice(pipelineSplitsThatFit(x, plan, globalBatch, shape, classes)));
    return memory;
}

std::unique_ptr<engine::VirtualClock> emulate(const Experiment& x, const DevicePlan& plan, int64_t globalBatch,
                                              const engine::Dims& shape, int64_t classes,
                                              const engine::MemoryCheck& memory,
                                              const std::function<void(const std::string&)>& say,
                                              profiler::RunWriter* writer, const std::string& dbPath) {
    const int64_t perReplica = engine::replicaBatch(globalBatch, plan.replicas);
    // multi_worker: each worker's host feeds its own device its share.
    const profiler::InfeedRate rate = infeedOf(x, plan.network ? perReplica : globalBatch, dbPath);
    const double infeed = rate.seconds_per_batch;
    const std::string infeedSource = x.device.infeed_seconds_per_batch > 0 ? "pinned (device.infeed_seconds_per_batch)"
                                     : rate.cached ? "this host's rate measured " + rate.measured_at
                                                   : "measured now on this host";
    auto clock = std::make_unique<engine::VirtualClock>(virtualClockConfig(plan, x, infeed), x.model, shape, classes,
                                                        x.optimizer);
    const engine::VirtualStep& v = clock->stepCost(globalBatch);
    std::string layout = std::to_string(plan.replicas) + " replica" + (plan.replicas == 1 ? "" : "s") + " of " +
                        plan.spec.replicaLabel() + ", " + engine::precisionName(plan.precision) + ", batch " +
                        std::to_string(perReplica) + " each";
    if (plan.pipeline_link) {
        const engine::PipelineStepCost& p = clock->pipelineCost(globalBatch);
        std::string starts;
        for (size_t k = 1; k < p.starts.size(); ++k) starts += (k > 1 ? "," : "") + std::to_string(p.starts[k]);
        layout = std::to_string(p.starts.size()) + " pipeline stages, each on one " + plan.spec.replicaLabel() + ", " +
                engine::precisionName(plan.precision) + ", " + std::to_string(p.micro) + " micro-batches of " +
                std::to_string(p.micro_batch) + ", stages from layers " + starts + ", idle " +
                std::to_string(static_cast<int>(std::lround(p.timeline.bubbleFraction() * 100))) + " % of the schedule";
    }
    say("emulating " + plan.devices + " (" + layout +
        (plan.network ? ", one per host, " + profiler::shortestNumber(x.device.network_gbps) + " Gbit/s links" : "") + "): a step takes " +
        profiler::millis(v.seconds()) + " virtual (forward " + profiler::millis(v.forward_s) + ", backward " + profiler::millis(v.backward_s) +
        ", optimizer " + profiler::millis(v.optimizer_s) +
        (plan.pipeline_link ? ", hand-offs " + profiler::millis(v.comm_s) + " per stage, the bubble and hand-offs exposed "
                            : ", exchange of gradients and records " + profiler::millis(v.comm_s) + " of which exposed ") +
        profiler::millis(v.exposed_comm_s) + ", overhead " + profiler::millis(v.overhead_s) + ", input wait " + profiler::millis(v.input_s) +
        "; the host makes a batch in " + profiler::millis(infeed) + ", " + infeedSource + ")");
    if (plan.spec.kind == engine::DeviceKind::Tpu && v.matrix_utilisation < 0.5)
        say("note: the MXUs are " + std::to_string(static_cast<int>(std::lround(v.matrix_utilisation * 100))) + " % utilised: matrix dimensions are padded "
            "to multiples of 128 (feature sizes) and 8 (batch); sizes that are multiples of 128 waste less");
    if (memory.near_capacity) {
        const std::vector<MemorySplit> splits = pipelineSplitsThatFit(x, plan, globalBatch, shape, classes);
        say("note: " + memory.message + splitAdvice(splits));
        if (writer && !splits.empty()) writer->attributes({{runattr::kMemorySplits, splitsJson(splits).dump()}});
    }
    if (writer)
        writer->attributes({{runattr::kVirtualDevice, plan.spec.id},
                            {runattr::kVirtualReplicas, std::to_string(plan.replicas)},
                            {runattr::kVirtualPrecision, engine::precisionName(plan.precision)},
                            {runattr::kVirtualTopology, plan.topology ? plan.topology->describe() : "none"},
                            {runattr::kVirtualInfeedSecondsPerBatch, profiler::shortestNumber(infeed)},
                            {runattr::kVirtualInfeedSource, infeedSource},
                            {runattr::kVirtualStepSeconds, profiler::shortestNumber(v.seconds())},
                            {runattr::kVirtualMatrixUtilisation, profiler::shortestNumber(v.matrix_utilisation)},
                            {runattr::kVirtualMemoryFraction, profiler::shortestNumber(memory.fraction)}});
    if (writer && plan.network)
        writer->attributes({{runattr::kVirtualNetworkGbps, profiler::shortestNumber(x.device.network_gbps)},
                            {runattr::kVirtualNetworkLatencyUs, profiler::shortestNumber(x.device.network_latency_us)}});
    return clock;
}

RunProfiler::Emulation emulationProfile(engine::VirtualClock& clock, const DevicePlan& plan, int64_t globalBatch,
                                        const engine::MemoryCheck& memory) {
    RunProfiler::Emulation e;
    e.timing = clock.replicaTiming(globalBatch);
    e.graph = clock.replicaGraph(globalBatch);
    if (const auto& pipeline = clock.config().pipeline) {
        // The graph is one micro-batch's: every stage runs its forward and backward ops once per
        // micro-batch, its updates once. The footprint is the fullest stage's (memoryOnDevice).
        for (engine::OpDesc& op : e.graph.ops)
            if (op.part != engine::StepPart::Optimizer) op.calls *= pipeline->micro;
        e.graph.params_bytes = memory.params_bytes;
        e.graph.grads_bytes = memory.grads_bytes;
        e.graph.optimizer_bytes = memory.optimizer_bytes;
    }
    e.activation_bytes = memory.activation_bytes;
    e.replica_memory_bytes = plan.replica_memory_bytes;
    e.replica_label = plan.spec.replicaLabel();
    e.peak_gflops = plan.spec.replicaMatrixFlops(plan.precision) * 1e-9;
    e.bandwidth_gbs = plan.spec.replicaBandwidthBytesPerS() * 1e-9;
    return e;
}

}  // namespace trainbench::app
