#pragma once
// One dense layer's forward pass as an evaluation graph, [batch x in] x [in x out] with fp32 byte
// counts as OpCost keeps them: the graph the inference estimates are worked out by hand on.
#include <cstdint>

#include "engine/device/opdesc.h"

namespace trainbench::engine::testing {

inline OpGraph denseForward(int64_t batch, int64_t in, int64_t out) {
    OpGraph g;
    g.batch = batch;
    OpDesc op;
    op.cost.kind = "inner_product_forward";
    op.cost.flops = 2.0 * batch * in * out;
    op.cost.bytes = 4.0 * (batch * in + in * out + batch * out);
    op.matrix = {batch, out, in};
    op.part = StepPart::Forward;
    g.ops.push_back(op);
    g.params_bytes = 4.0 * in * out;
    g.activation_bytes = 4.0 * batch * (in + out);
    g.param_count = in * out;
    return g;
}

}  // namespace trainbench::engine::testing
