#pragma once
// The per-example output shape of one node, from the shapes of the values before it: the checks
// Graph::valueShapes and Graph::validate make node by node.
#include <map>
#include <optional>
#include <string>

#include "engine/graph/graph.h"

namespace trainbench::engine::graph {

// GraphError starting with `where` ("node 'conv_0' (Conv)") when an input is undefined (or a value
// where an initializer belongs, or the reverse), an attribute is out of range, or a weight's dims do
// not fit the input.
Dims nodeOutputShape(const Graph& graph, const Node& node, const std::map<std::string, Dims>& shapes,
                     const std::string& where);

// Add, Mul, Sub, Div.
bool isBinary(OpKind kind);

// An initializer operand of a binary node against a per-example value of shape `x`: its dims
// right-aligned to x's rank (leading 1s added, a leading batch dimension of 1 dropped), each 1 or
// x's; nullopt when it does not broadcast so.
std::optional<Dims> broadcastDims(const Dims& x, const Dims& operand);

}  // namespace trainbench::engine::graph
