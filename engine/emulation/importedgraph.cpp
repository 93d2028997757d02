#include "engine/emulation/importedgraph.h"

#include <map>
#include <mutex>

#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnximport.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

std::shared_ptr<const graph::Graph> importedGraph(const std::string& path) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const graph::Graph>> graphs;
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = graphs.find(path); it != graphs.end()) return it->second;
    try {
        auto g = std::make_shared<const graph::Graph>(onnx::readOnnx(path, {.shapes_only = true}));
        graphs.emplace(path, g);
        return g;
    } catch (const onnx::OnnxError& e) {
        throw ModelError(std::string("model.onnx: ") + e.what());
    }
}

}  // namespace trainbench::engine
