#include "engine/emulation/transformershape.h"

#include <stdexcept>

namespace trainbench::engine {

void TransformerShape::validate() const {
    auto positive = [&](int64_t v, const char* field) {
        if (v <= 0)
            throw std::invalid_argument(std::string(field) + ": expected a positive integer, got " + std::to_string(v));
    };
    positive(layers, "layers");
    positive(hidden, "hidden");
    positive(heads, "heads");
    positive(sequence, "sequence");
    positive(vocab, "vocab");
    if (ffn < 0) throw std::invalid_argument("ffn: expected a positive integer (or 0 for 4 x hidden), got " + std::to_string(ffn));
    if (hidden % heads != 0)
        throw std::invalid_argument("heads: " + std::to_string(heads) + " heads do not divide the hidden size " +
                                    std::to_string(hidden));
}

double TransformerCosts::params() const {
    return static_cast<double>(shape.layers) * layer_params + embedding_params + head_params;
}

double TransformerCosts::forwardFlops() const {
    return static_cast<double>(shape.layers) * layer_forward_flops + head_forward_flops;
}

TransformerCosts decoderCosts(const TransformerShape& shape) {
    shape.validate();
    const double h = static_cast<double>(shape.hidden), f = static_cast<double>(shape.ffnWidth());
    const double s = static_cast<double>(shape.sequence), v = static_cast<double>(shape.vocab);
    TransformerCosts c;
    c.shape = shape;
    // q, k, v, output: 4 (h x h + h); feed-forward h x f + f and f x h + h; two layer norms 2 x 2h.
    c.layer_params = 4.0 * (h * h + h) + (h * f + f) + (f * h + h) + 4.0 * h;
    c.layer_forward_flops = 2.0 * s * (4.0 * h * h + 2.0 * h * f) + 4.0 * s * s * h;
    c.embedding_params = v * h + s * h + 2.0 * h;  // the final layer norm travels with the embeddings' count
    c.head_params = 0.0;
    c.head_forward_flops = 2.0 * s * h * v;
    c.head_tied_to_embedding = true;
    return c;
}

}  // namespace trainbench::engine
