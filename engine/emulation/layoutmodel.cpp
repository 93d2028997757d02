#include "engine/emulation/layoutmodel.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "engine/emulation/collectivemodel.h"
#include "engine/emulation/topology.h"

namespace trainbench::engine {

const char* recomputeName(Recompute r) {
    switch (r) {
        case Recompute::None: return "none";
        case Recompute::Selective: return "selective";
        case Recompute::Full: return "full";
    }
    return "?";
}

std::optional<Recompute> parseRecompute(const std::string& name) {
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
        if (name == recomputeName(r)) return r;
    return std::nullopt;
}

std::string Layout::text() const {
    std::string s = "d" + std::to_string(data) + " p" + std::to_string(pipeline) + " t" + std::to_string(tensor) +
                    " b" + std::to_string(micro_batch) + " " + recomputeName(recompute);
    if (interleave > 1) s += " v" + std::to_string(interleave);
    return s;
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Kernels of one Megatron-LM GPT block in forward, with its fused kernels: 2 layer norms, the q/k/v,
// output and two feed-forward GEMMs, the two attention products, the fused scale-mask-softmax, the
// attention dropout, the context's transpose copy, 2 fused bias-dropout-adds, the fused bias-GELU
// and 2 tensor-parallel all-reduces. The attention core alone (selective recomputation): 2 products,
// softmax, dropout. The head: its GEMM, the loss's softmax and its reduction.
constexpr double kBlockForwardKernels = 16.0;
constexpr double kAttentionCoreKernels = 4.0;
constexpr double kHeadForwardKernels = 3.0;

std::string layoutGib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", bytes / kGiB);
    return buf;
}

double layoutElementBytes(Precision p) { return p == Precision::Fp32 || p == Precision::Tf32 ? 4.0 : 2.0; }

// Korthikanti et al. 2022, Table 2, without sequence parallelism: bytes one block keeps for backward
// per micro-batch on one tensor-parallel rank. Their 24/t term is q, k, v (6), the attention's output
// (2) and the feed-forward's two f-wide tensors (16 at f = 4h): (8 + 4f/h)/t here. 16-bit values;
// scaled for 32-bit ones.
struct BlockActivations {
    double full = 0.0;       // nothing recomputed
    double selective = 0.0;  // without the attention core's s x s tensors
    double input = 0.0;      // the block's input alone (full recomputation)
};

BlockActivations layoutBlockActivations(const TransformerShape& shape, double b, double t, double elementBytes) {
    const double s = static_cast<double>(shape.sequence), h = static_cast<double>(shape.hidden);
    const double a = static_cast<double>(shape.heads), f = static_cast<double>(shape.ffnWidth());
    const double scale = elementBytes / 2.0;
    BlockActivations act;
    act.selective = s * b * h * (10.0 + (8.0 + 4.0 * f / h) / t) * scale;
    act.full = act.selective + 5.0 * a * s * s * b / t * scale;
    act.input = 2.0 * s * b * h * scale;
    return act;
}

double layoutStored(const BlockActivations& act, Recompute r) {
    return r == Recompute::None ? act.full : r == Recompute::Selective ? act.selective : act.input;
}

// Links as the collectives see them: one direction, at the achieved fraction of the bandwidth.
LinkParams layoutNvlink(const GpuCluster& c, double efficiency) {
    return LinkParams::fromBandwidth(c.device.links->latency_s, c.device.links->nvlink_bytes_per_s / 2.0 * efficiency);
}
LinkParams layoutNetwork(const GpuCluster& c, double efficiency) {
    return LinkParams::fromBandwidth(c.network_latency_s, c.network_bytes_per_s * efficiency);
}

// An all-reduce over `ranks` GPUs: the node's NVLink switch when they share a node, else a ring over
// the network (NCCL's ring across nodes; each GPU has its own adapter).
double layoutAllReduce(const GpuCluster& c, const LayoutAssumptions& a, int ranks, bool withinNode, double bytes) {
    if (ranks <= 1 || bytes <= 0.0) return 0.0;
    const Topology topo = withinNode ? switchTopology(ranks, layoutNvlink(c, a.link_efficiency))
                                     : ringTopology(ranks, layoutNetwork(c, a.link_efficiency));
    return allReduceSeconds(topo, bytes);
}

}  // namespace

std::string layoutProblem(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                          const Layout& l) {
    const TransformerShape& m = costs.shape;
    if (l.data < 1 || l.pipeline < 1 || l.tensor < 1 || l.micro_batch < 1 || l.interleave < 1)
        return "every degree and the micro-batch must be at least 1";
    if (l.devices() != cluster.devices)
        return "d x p x t = " + std::to_string(l.devices()) + ", not the " + std::to_string(cluster.devices) + " devices";
    if (m.heads % l.tensor != 0)
        return "t=" + std::to_string(l.tensor) + " does not divide " + std::to_string(m.heads) + " heads";
    if (m.ffnWidth() % l.tensor != 0)
        return "t=" + std::to_string(l.tensor) + " does not divide the feed-forward width " + std::to_string(m.ffnWidth());
    if (m.layers % l.pipeline != 0)
        return "p=" + std::to_string(l.pipeline) + " does not divide " + std::to_string(m.layers) + " layers";
    if (global_batch % l.data != 0)
        return "d=" + std::to_string(l.data) + " does not divide the global batch " + std::to_string(global_batch);
    const int64_t perReplica = global_batch / l.data;
    if (perReplica % l.micro_batch != 0)
        return "micro-batch " + std::to_string(l.micro_batch) + " does not divide the batch per replica " +
               std::to_string(perReplica);
    if (l.interleave > 1) {
        if (l.pipeline == 1) return "interleaving needs a pipeline (p > 1)";
        if ((m.layers / l.pipeline) % l.interleave != 0)
            return "v=" + std::to_string(l.interleave) + " chunks do not divide the " + std::to_string(m.layers / l.pipeline) +
                   " layers of a stage";
        if ((perReplica / l.micro_batch) % l.pipeline != 0)
            return "interleaving needs the micro-batches (" + std::to_string(perReplica / l.micro_batch) +
                   ") to be a multiple of p=" + std::to_string(l.pipeline);
    }
    return {};
}

LayoutEstimate estimateLayout(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                              const Layout& l, const LayoutAssumptions& a) {
    if (cluster.device.kind != DeviceKind::Gpu || !cluster.device.links)
        throw std::invalid_argument("layout planning needs a GPU with NVLink figures; " + cluster.device.id + " is a " +
                                    deviceKindName(cluster.device.kind));
    if (const std::string problem = layoutProblem(costs, global_batch, cluster, l); !problem.empty())
        throw std::invalid_argument("layout " + l.text() + ": " + problem);
    const TransformerShape& m = costs.shape;
    const double t = l.tensor, p = l.pipeline, v = l.interleave, b = static_cast<double>(l.micro_batch);
    const double s = static_cast<double>(m.sequence), h = static_cast<double>(m.hidden);
    const double V = static_cast<double>(m.vocab);
    const double el = layoutElementBytes(a.precision);
    const double matrixRate = cluster.device.replicaMatrixFlops(a.precision) * a.matrix_efficiency;
    const double memRate = cluster.device.memory_bandwidth_bytes_per_s * a.memory_efficiency;
    const int gpn = std::max(1, cluster.devices_per_node);

    LayoutEstimate e;
    e.layout = l;
    const int64_t perReplica = global_batch / l.data;
    e.micro_batches = perReplica / l.micro_batch;
    const double mb = static_cast<double>(e.micro_batches);
    const double lp = static_cast<double>(m.layers) / p;  // blocks per GPU (all its chunks)

    // One block, one micro-batch, one tensor rank. Element-wise ops (layer norms, GELU, softmax,
    // dropout, residual adds) are bound by memory: each stored activation byte written once and read
    // once in forward, twice that in backward.
    const BlockActivations act = layoutBlockActivations(m, b, t, el);
    const double blockFlops = costs.layer_forward_flops * b / t;
    // Every kernel also pays the device's per-op overhead (catalog): a Megatron block launches about
    // kBlockForwardKernels in forward and twice as many in backward.
    const double launch = cluster.device.per_op_overhead_s;
    const double fwd = blockFlops / matrixRate + 2.0 * act.full / memRate + kBlockForwardKernels * launch;
    const double bwd = 2.0 * fwd;
    const double attentionFlops = 4.0 * s * s * h * b / t;
    double rec = 0.0;
    if (l.recompute == Recompute::Full) rec = fwd;
    if (l.recompute == Recompute::Selective)
        rec = attentionFlops / matrixRate + 2.0 * (act.full - act.selective) / memRate + kAttentionCoreKernels * launch;

    // Megatron's tensor parallelism: two all-reduces of the b x s x h activations per block forward,
    // two in backward, two more when the forward is recomputed.
    const bool tensorInNode = l.tensor <= gpn;
    const double arBytes = b * s * h * el;
    const double arTime = layoutAllReduce(cluster, a, l.tensor, tensorInNode, arBytes);
    const double tpFwd = 2.0 * arTime, tpBwd = 2.0 * arTime, tpRec = l.recompute == Recompute::Full ? 2.0 * arTime : 0.0;

    // The last stage also runs the output projection over the vocabulary (split over the tensor
    // ranks, as Megatron's vocabulary-parallel head) and the loss over its logits.
    const double logitsBytes = s * b * V / t * el;
    const double headFwd = costs.head_forward_flops * b / t / matrixRate + 2.0 * logitsBytes / memRate + kHeadForwardKernels * launch;
    const double headBwd = 2.0 * headFwd;

    e.compute_s = mb * (lp * (fwd + bwd) + headFwd + headBwd);
    e.recompute_s = mb * lp * rec;
    e.tensor_comm_s = mb * lp * (tpFwd + tpBwd + tpRec);
    // The slowest (last) stage's time for one micro-batch, forward and backward.
    const double perMicroBatch = lp * (fwd + bwd + rec + tpFwd + tpBwd + tpRec) + headFwd + headBwd;
    // 1F1B (PipeDream-Flush) and fill-drain: (p - 1) micro-batch times of fill and drain; interleaved
    // with v chunks: (p - 1) / v of them (Narayanan et al. 2021, section 2.2).
    e.bubble_s = (p - 1.0) / v * perMicroBatch;

    // Ranks are numbered tensor first, then data, then pipeline (Megatron-LM's order): data-parallel
    // peers are t apart, pipeline neighbours t x d apart.
    const bool meshInNode = l.devices() <= gpn;
    if (l.pipeline > 1) {
        // Each micro-batch's activations go forward and its gradients back across every boundary of
        // the v chunks; with t > 1 each tensor rank sends its 1/t (the scatter/gather optimisation of
        // Narayanan et al. 2021, section 4.1). Blocking sends: not hidden behind compute.
        const double bytes = b * s * h * el / (l.tensor > 1 ? t : 1.0);
        const LinkParams link = meshInNode ? layoutNvlink(cluster, a.link_efficiency) : layoutNetwork(cluster, a.link_efficiency);
        const double msg = pointToPointSeconds(link, bytes);
        e.pipeline_comm_s = 2.0 * (mb * v + (p - 1.0)) * msg;
    }

    // Parameters on the busiest GPU: its blocks, and the embedding on the first stage (on a single
    // stage also the head); with p > 1 the last stage holds the head (a copy of the tied embedding).
    const double blockParams = lp * costs.layer_params / t;
    const double firstExtra = costs.embedding_params / t + (l.pipeline == 1 ? costs.head_params / t : 0.0);
    const double lastExtra = costs.head_tied_to_embedding ? costs.embedding_params / t : costs.head_params / t;
    const double params = blockParams + (l.pipeline == 1 ? firstExtra : std::max(firstExtra, lastExtra));

    const bool dataInNode = l.tensor * l.data <= gpn;
    e.data_comm_total_s = layoutAllReduce(cluster, a, l.data, dataInNode, params * el);
    const double lastBackward = lp * (bwd + rec + tpBwd + tpRec) + headBwd;
    e.data_comm_s = a.overlap_gradients ? std::max(0.0, e.data_comm_total_s - lastBackward) : e.data_comm_total_s;
    // A head tied to the embedding: the first and the last stage sum their copies' gradients after
    // the flush (Megatron-LM's embedding all-reduce), never hidden.
    if (costs.head_tied_to_embedding && l.pipeline > 1) {
        const double tied = layoutAllReduce(cluster, a, 2, meshInNode, costs.embedding_params / t * el);
        e.data_comm_total_s += tied;
        e.data_comm_s += tied;
    }

    const double shard = a.shard_optimizer ? static_cast<double>(l.data) : 1.0;
    // Adam reads the gradient, the master weights and two moments and writes them back with the
    // 16-bit weights: gradient + 2 x state + weight bytes per parameter.
    e.optimizer_s = params / shard * (el + 2.0 * a.optimizer_bytes_per_param + el) / memRate;
    e.overhead_s = cluster.device.per_step_overhead_s;
    e.step_s = e.compute_s + e.recompute_s + e.bubble_s + e.tensor_comm_s + e.pipeline_comm_s + e.data_comm_s +
               e.optimizer_s + e.overhead_s;

    // Memory: the first stage holds the most activations. 1F1B keeps at most p micro-batches in
    // flight there (fill-drain would keep all m); the interleaved schedule 1 + (p - 1) / (p v) times
    // as many (Korthikanti et al. 2022, section 4.2.3). Recomputing, one block's full activations are
    // live again during its backward.
    e.weight_bytes = params * el;
    e.gradient_bytes = params * el;
    e.optimizer_bytes = params * a.optimizer_bytes_per_param / shard;
    double inFlight = std::min(p, mb);
    if (l.interleave > 1) inFlight *= 1.0 + (p - 1.0) / (p * v);
    e.activation_bytes = lp * layoutStored(act, l.recompute) * inFlight;
    if (l.recompute != Recompute::None) e.activation_bytes += act.full - layoutStored(act, l.recompute);
    e.capacity_bytes = cluster.device.memory_bytes;
    e.fits = e.memoryBytes() <= e.capacity_bytes;
    if (!e.fits)
        e.why_not = "memory " + layoutGib(e.memoryBytes()) + " GiB > " + layoutGib(e.capacity_bytes) + " GiB per device (weights " +
                    layoutGib(e.weight_bytes) + ", gradients " + layoutGib(e.gradient_bytes) + ", optimizer " +
                    layoutGib(e.optimizer_bytes) + ", activations " + layoutGib(e.activation_bytes) + ")";

    const double B = static_cast<double>(global_batch);
    e.model_flops = 3.0 * B * costs.forwardFlops();
    double recomputed = 0.0;
    if (l.recompute == Recompute::Full) recomputed = static_cast<double>(m.layers) * costs.layer_forward_flops;
    if (l.recompute == Recompute::Selective) recomputed = static_cast<double>(m.layers) * 4.0 * s * s * h;
    e.hardware_flops = e.model_flops + B * recomputed;
    const double n = l.devices();
    e.model_tflops_per_gpu = e.model_flops / e.step_s / n / 1e12;
    e.hardware_tflops_per_gpu = e.hardware_flops / e.step_s / n / 1e12;
    e.tokens_per_s = B * s / e.step_s;
    e.usd_per_step = e.step_s / 3600.0 * n * cluster.device.price_per_hour;
    return e;
}

}  // namespace trainbench::engine
