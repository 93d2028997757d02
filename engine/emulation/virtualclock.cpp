#include "engine/emulation/virtualclock.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace trainbench::engine {

namespace {
// The evaluation batch per replica (the trainer evaluates 1,000 examples at a time on one device).
constexpr int64_t kEvalBatch = 1000;
}  // namespace

int64_t replicaBatch(int64_t globalBatch, int replicas) {
    if (replicas <= 0 || globalBatch % replicas != 0)
        throw std::invalid_argument("a global batch of " + std::to_string(globalBatch) + " does not split evenly over " +
                                    std::to_string(replicas) + " replicas (emulated devices need static shapes)");
    return globalBatch / replicas;
}

std::vector<GradientBucket> gradientBuckets(const std::vector<int64_t>& layerParams, double bucketBytes) {
    std::vector<GradientBucket> buckets;
    for (const int64_t floats : layerParams) {
        const bool full = !buckets.empty() && static_cast<double>(buckets.back().floats) * 4.0 >= bucketBytes;
        if (buckets.empty() || full || bucketBytes <= 0) buckets.push_back({floats, 1});
        else {
            buckets.back().floats += floats;
            ++buckets.back().layers;
        }
    }
    return buckets;
}

VirtualClock::VirtualClock(VirtualClockConfig config, ModelSpec model, Dims sampleShape, int64_t numClasses,
                           OptimizerConfig optimizer)
    : config_(std::move(config)),
      model_(std::move(model)),
      sample_(std::move(sampleShape)),
      classes_(numClasses),
      optimizer_(optimizer) {
    if (config_.replicas < 1) throw std::invalid_argument("virtual clock: replicas must be at least 1");
    if (config_.replicas > 1) {
        if (!config_.topology) throw std::invalid_argument("virtual clock: several replicas need a topology");
        collective_ = std::make_unique<CollectiveClock>(*config_.topology);
    }
}

VirtualClock::Entry& VirtualClock::entry(int64_t globalBatch) {
    auto it = steps_.find(globalBatch);
    if (it != steps_.end()) return it->second;
    Entry e;
    if (config_.pipeline) {
        // Stage 0's forwards and backwards are the step's phases; the rest of the schedule's makespan
        // (the bubble and the hand-offs) is its exposed communication, as a real pipeline records it.
        const PipelineStepCost& p = *(e.pipeline = pipelineStepCost(model_, sample_, classes_, globalBatch, optimizer_,
                                                                    config_.device, config_.precision, *config_.pipeline));
        e.graph = trainingStepGraph(model_, sample_, classes_, p.micro_batch, optimizer_);
        e.timing = stepTime(e.graph, config_.device, config_.precision);
        VirtualStep& v = e.step;
        const double M = static_cast<double>(p.micro);
        v.forward_s = M * p.forward_s[0];
        v.backward_s = M * p.backward_s[0];
        v.optimizer_s = *std::max_element(p.optimizer_s.begin(), p.optimizer_s.end());
        v.exposed_comm_s = std::max(0.0, p.timeline.stepSeconds - v.forward_s - v.backward_s);
        for (size_t k = 0; k < p.memory.size(); ++k) v.comm_s += p.sendSeconds(static_cast<int>(k)) / static_cast<double>(p.memory.size());
        v.overhead_s = p.overhead_s;
        v.matrix_utilisation = e.timing.matrix_utilisation;
        const double device = v.forward_s + v.backward_s + v.optimizer_s + v.exposed_comm_s + v.overhead_s;
        v.input_s = config_.infeed_prefetch ? std::max(0.0, config_.infeed_seconds_per_batch - device)
                                            : config_.infeed_seconds_per_batch;
        return steps_.emplace(globalBatch, std::move(e)).first->second;
    }
    // Replicas get equal shares (validation asks for static shapes); a batch that does not split is
    // charged as its largest share, the replica the others wait for.
    const int64_t perReplica = (globalBatch + config_.replicas - 1) / config_.replicas;
    e.graph = trainingStepGraph(model_, sample_, classes_, perReplica, optimizer_);
    e.timing = stepTime(e.graph, config_.device, config_.precision);
    VirtualStep& v = e.step;
    v.forward_s = e.timing.forward_s;
    v.backward_s = e.timing.backward_s;
    v.optimizer_s = e.timing.optimizer_s;
    v.overhead_s = e.timing.overhead_s;
    v.matrix_utilisation = e.timing.matrix_utilisation;
    if (collective_) {
        // The buckets the engine all-reduces (GradientSync::plan), each a ring (or the topology's)
        // all-reduce of fp32 gradients.
        double last = 0.0;
        for (const GradientBucket& b : gradientBuckets(e.graph.layer_params, config_.bucket_bytes)) {
            last = collective_->allReduceSeconds(static_cast<uint64_t>(b.floats) * 4u);
            v.comm_s += last;
        }
        // Overlapped, the exchange hides behind backward, except for the last bucket (the first
        // layers' gradients), which can only start once backward is done.
        v.exposed_comm_s = config_.overlap ? std::max(last, v.comm_s - v.backward_s) : v.comm_s;
        // After the update the replicas agree on the step's loss and records (and on whether to
        // stop): a small all-reduce of kRecordFloats per replica, never hidden.
        const double records = collective_->allReduceSeconds(
            static_cast<uint64_t>(kRecordFloats) * static_cast<uint64_t>(config_.replicas) * 4u);
        v.comm_s += records;
        v.exposed_comm_s += records;
    }
    const double device = v.forward_s + v.backward_s + v.optimizer_s + v.exposed_comm_s + v.overhead_s;
    v.input_s = config_.infeed_prefetch ? std::max(0.0, config_.infeed_seconds_per_batch - device)
                                        : config_.infeed_seconds_per_batch;
    return steps_.emplace(globalBatch, std::move(e)).first->second;
}

const VirtualStep& VirtualClock::stepCost(int64_t globalBatch) { return entry(globalBatch).step; }

const PipelineStepCost& VirtualClock::pipelineCost(int64_t globalBatch) {
    Entry& e = entry(globalBatch);
    if (!e.pipeline) throw std::logic_error("virtual clock: not a pipeline");
    return *e.pipeline;
}

const StepTiming& VirtualClock::replicaTiming(int64_t globalBatch) { return entry(globalBatch).timing; }

const OpGraph& VirtualClock::replicaGraph(int64_t globalBatch) { return entry(globalBatch).graph; }

void chargeStep(StepRecord& rec, const VirtualStep& v) {
    rec.input_seconds = v.input_s;
    rec.forward_seconds = v.forward_s;
    rec.backward_seconds = v.backward_s;
    rec.optimizer_seconds = v.optimizer_s;
    rec.exposed_comm_seconds = v.exposed_comm_s;
    rec.other_seconds = v.overhead_s;
    rec.step_seconds = v.seconds();
}

void VirtualClock::step(StepRecord& rec) {
    const VirtualStep& v = stepCost(rec.samples);
    chargeStep(rec, v);
    if (config_.pipeline) {
        // Each stage: its own forwards, backwards and update; its sends; idle for the rest of the step.
        const PipelineStepCost& p = pipelineCost(rec.samples);
        const double M = static_cast<double>(p.micro), step = v.seconds() - v.input_s - v.overhead_s;
        double comm = 0.0, wait = 0.0;
        for (ReplicaStep& r : rec.replicas) {
            const size_t k = static_cast<size_t>(std::clamp(r.rank, 0, static_cast<int>(p.memory.size()) - 1));
            r.forward_seconds = M * p.forward_s[k];
            r.backward_seconds = M * p.backward_s[k];
            r.optimizer_seconds = p.optimizer_s[k];
            r.compute_seconds = p.busySeconds(static_cast<int>(k));
            r.comm_seconds = p.sendSeconds(static_cast<int>(k));
            r.exposed_comm_seconds = std::max(0.0, step - r.compute_seconds);
            r.wait_seconds = std::max(0.0, step - r.compute_seconds - r.comm_seconds);
            comm += r.comm_seconds;
            wait += r.wait_seconds;
        }
        if (!rec.replicas.empty()) {
            rec.comm_seconds = comm / static_cast<double>(rec.replicas.size());
            rec.wait_seconds = wait / static_cast<double>(rec.replicas.size());
        }
        return;
    }
    rec.comm_seconds = v.comm_s;
    rec.wait_seconds = 0.0;  // the replicas are identical: nobody waits for a straggler
    for (ReplicaStep& r : rec.replicas) {
        r.compute_seconds = v.forward_s + v.backward_s + v.optimizer_s;
        r.forward_seconds = v.forward_s;
        r.backward_seconds = v.backward_s;
        r.optimizer_seconds = v.optimizer_s;
        r.comm_seconds = v.comm_s;
        r.exposed_comm_seconds = v.exposed_comm_s;
        r.wait_seconds = 0.0;
    }
    // Input stages keep the host's measured figures: they describe the host pipeline (the infeed).
}

double VirtualClock::evalSeconds(int64_t samples) {
    // Evaluation splits each batch of kEvalBatch over the replicas, the last batch smaller.
    double total = 0.0;
    for (int64_t done = 0; done < samples; done += kEvalBatch) {
        const int64_t batch = std::min(kEvalBatch, samples - done);
        const int64_t perReplica = (batch + config_.replicas - 1) / config_.replicas;
        auto it = evalBatches_.find(perReplica);
        if (it == evalBatches_.end()) {
            const StepTiming t = stepTime(evaluationGraph(model_, sample_, classes_, perReplica), config_.device,
                                          config_.precision);
            it = evalBatches_.emplace(perReplica, t.seconds).first;
        }
        total += it->second;
    }
    return total;
}

void VirtualClock::eval(EvalRecord& rec) { rec.eval_seconds = evalSeconds(rec.samples); }

}  // namespace trainbench::engine
