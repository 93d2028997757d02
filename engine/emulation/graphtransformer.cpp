#include "engine/emulation/graphtransformer.h"

#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "engine/emulation/graphops.h"
#include "engine/optim/optimizerconfig.h"

namespace trainbench::engine {

namespace {

// The block a node belongs to: the first segment of its name that is a word, a dot and a number
// ("layers.3", "h.11", "blocks.0"); none for the embedding and the head.
std::optional<int> graphBlockOf(const std::string& name) {
    size_t start = 0;
    while (start <= name.size()) {
        const size_t end = std::min(name.find('/', start), name.size());
        const std::string seg = name.substr(start, end - start);
        const size_t dot = seg.rfind('.');
        if (dot != std::string::npos && dot > 0 && dot + 1 < seg.size()) {
            bool digits = true;
            for (size_t i = dot + 1; i < seg.size(); ++i) digits = digits && std::isdigit(static_cast<unsigned char>(seg[i]));
            if (digits) return std::stoi(seg.substr(dot + 1));
        }
        start = end + 1;
    }
    return std::nullopt;
}

double graphValues(const graph::Dims& dims) {
    double n = 1.0;
    for (int64_t d : dims) n *= static_cast<double>(d);
    return n;
}

}  // namespace

TransformerCosts transformerCostsOfGraph(const graph::Graph& g) {
    if (!g.integer_input || g.sample_shape.size() != 1)
        throw std::invalid_argument("the model does not take a sequence of token ids; layout planning splits transformers");
    TransformerCosts c;
    TransformerShape& s = c.shape;
    s.name = g.metadata.source_run.empty() ? "onnx model" : g.metadata.source_run;
    s.sequence = g.sample_shape[0];

    // Parameters per node: the initializers of more than one value it reads. Each reader counts its
    // own: an exporter that finds two blocks' layer norms equal (as freshly initialised, or stripped)
    // writes one initializer for both, and the blocks still train two.
    std::map<std::string, double> nodeParams;
    for (const graph::Node& n : g.nodes)
        for (const std::string& in : n.inputs) {
            const auto it = g.initializers.find(in);
            if (it == g.initializers.end() || graphValues(it->second.dims) < 2.0) continue;
            nodeParams[n.name] += graphValues(it->second.dims);
        }
    // Forward matrix FLOPs per node, one sequence.
    std::map<std::string, double> nodeFlops;
    for (const OpDesc& op : trainingOpGraph(g, 1, OptimizerConfig{}).ops)
        if (op.part == StepPart::Forward && !op.matrix.empty())
            nodeFlops[op.layer] += 2.0 * static_cast<double>(op.matrix.m) * static_cast<double>(op.matrix.n) *
                                   static_cast<double>(op.matrix.k) * static_cast<double>(op.calls);

    std::map<int, double> blockParams, blockFlops;
    std::optional<int> firstBlock;
    bool afterBlocks = false;
    for (const graph::Node& n : g.nodes) {
        const std::optional<int> block = graphBlockOf(n.name);
        const double p = nodeParams.count(n.name) ? nodeParams[n.name] : 0.0;
        const double f = nodeFlops.count(n.name) ? nodeFlops[n.name] : 0.0;
        if (block) {
            if (afterBlocks) throw std::invalid_argument("node '" + n.name + "' of a numbered block follows the head");
            if (!firstBlock) firstBlock = *block;
            blockParams[*block] += p;
            blockFlops[*block] += f;
        } else if (!firstBlock) {
            c.embedding_params += p;
            // An embedding is a lookup; a projection before the blocks (rare) is charged with the head,
            // the end stage the model times.
            c.head_forward_flops += f;
        } else {
            afterBlocks = true;
            c.head_params += p;
            c.head_forward_flops += f;
        }
        if (n.kind == graph::OpKind::Gather && n.inputs.size() == 2 && n.inputs[0] == g.input &&
            g.initializers.count(n.inputs[1]) && g.initializers.at(n.inputs[1]).dims.size() == 2) {
            s.vocab = g.initializers.at(n.inputs[1]).dims[0];
            s.hidden = g.initializers.at(n.inputs[1]).dims[1];
        }
    }
    if (blockFlops.empty())
        throw std::invalid_argument("no numbered blocks: expected node names with a block index such as '/layers.0/...'");
    if (s.vocab == 0) throw std::invalid_argument("no token embedding: expected a Gather of the input ids from a [vocab, hidden] table");
    s.layers = static_cast<int64_t>(blockFlops.size());
    const auto& [block0, flops0] = *blockFlops.begin();
    for (const auto& [b, f] : blockFlops)
        if (std::fabs(f - flops0) > 1e-6 * flops0 || std::fabs(blockParams[b] - blockParams[block0]) > 1e-6 * blockParams[block0])
            throw std::invalid_argument("blocks " + std::to_string(block0) + " and " + std::to_string(b) +
                                        " differ (parameters or matrix FLOPs): the planner splits identical blocks");
    c.layer_params = blockParams[block0];
    c.layer_forward_flops = flops0;

    // Heads from the block's head split (a Reshape to [sequence, heads, hidden / heads]); the
    // feed-forward width from its widest weight.
    for (const graph::Node& n : g.nodes) {
        if (graphBlockOf(n.name) != block0) continue;
        if (n.kind == graph::OpKind::Reshape && n.ints.size() == 3 && n.ints[0] == s.sequence && n.ints[1] * n.ints[2] == s.hidden)
            s.heads = n.ints[1];
        if (n.kind == graph::OpKind::MatMul && n.inputs.size() == 2 && g.initializers.count(n.inputs[1])) {
            const graph::Dims& w = g.initializers.at(n.inputs[1]).dims;
            if (w.size() == 2 && w[0] == s.hidden && w[1] != s.hidden && w[1] != 3 * s.hidden) s.ffn = std::max(s.ffn, w[1]);
        }
    }
    if (s.heads == 0)
        throw std::invalid_argument("no attention heads found: expected a Reshape of [" + std::to_string(s.sequence) +
                                    ", heads, hidden / heads] in block " + std::to_string(block0));
    s.validate();
    return c;
}

}  // namespace trainbench::engine
