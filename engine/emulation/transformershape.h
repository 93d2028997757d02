#pragma once
// A decoder or encoder stack as the layout planner sees it (docs/model-parallelism.md): repeated
// transformer blocks of the same shape, an embedding before them and a head after them. The planner
// splits the blocks over pipeline stages and their matrices over tensor-parallel ranks, so it needs
// the shape, and per block and per sequence the parameters and matrix FLOPs.
#include <cstdint>
#include <string>

namespace trainbench::engine {

struct TransformerShape {
    std::string name;
    int64_t layers = 0;
    int64_t hidden = 0;
    int64_t heads = 0;
    int64_t sequence = 0;
    int64_t vocab = 0;
    int64_t ffn = 0;  // the feed-forward's inner width; 0: 4 x hidden

    int64_t ffnWidth() const { return ffn > 0 ? ffn : 4 * hidden; }
    // std::invalid_argument naming the field when a size is not positive, the heads do not divide
    // the hidden size, or the feed-forward width is negative.
    void validate() const;
};

// What the layout model charges, per transformer block and for the parts around the blocks.
struct TransformerCosts {
    TransformerShape shape;
    double layer_params = 0.0;         // one block's weights and biases
    double layer_forward_flops = 0.0;  // one block's matrix products, one sequence
    double embedding_params = 0.0;     // first pipeline stage: token (and position) embeddings
    double head_params = 0.0;          // last pipeline stage: the output projection's own weights
    double head_forward_flops = 0.0;   // last pipeline stage: its matrix products, one sequence
    // The output projection reuses the token embedding (GPT, Megatron): with more than one stage the
    // last stage holds a copy of the embedding, as Megatron-LM keeps it.
    bool head_tied_to_embedding = false;

    double params() const;            // the whole model, tied weights once
    double forwardFlops() const;      // one sequence through the whole model
};

// A GPT-style decoder (Megatron-LM's): per block attention q, k, v and output projections and a
// two-matrix feed-forward, each with a bias, two layer norms; 8sh^2 + 4shf + 4s^2h matrix FLOPs per
// sequence; token and learned position embeddings; the logits over every position through the
// tied token embedding (2shV FLOPs).
TransformerCosts decoderCosts(const TransformerShape& shape);

}  // namespace trainbench::engine
