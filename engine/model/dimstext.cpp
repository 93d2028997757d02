// dimsText (declared in layerstack.h) alone in its file: the graph code and the parsers' fuzz build
// (tests/fuzz, no oneDNN) use it without the layer stack.
#include <sstream>

#include "engine/model/layerstack.h"

namespace trainbench::engine {

std::string dimsText(const Dims& d) {
    std::ostringstream s;
    for (size_t i = 0; i < d.size(); ++i) s << (i ? "x" : "") << d[i];
    return s.str();
}

}  // namespace trainbench::engine
