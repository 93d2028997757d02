#pragma once
// The per-example output shape of one node, from the shapes of the values before it: the checks
// Graph::valueShapes and Graph::validate make node by node.
#include <map>
#include <string>

#include "engine/graph/graph.h"

namespace trainbench::engine::graph {

// GraphError starting with `where` ("node 'conv_0' (Conv)") when an input is undefined (or a value
// where an initializer belongs, or the reverse), an attribute is out of range, or a weight's dims do
// not fit the input.
Dims nodeOutputShape(const Graph& graph, const Node& node, const std::map<std::string, Dims>& shapes,
                     const std::string& where);

}  // namespace trainbench::engine::graph
