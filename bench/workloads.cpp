#include "bench/workloads.h"

#include "engine/device/cpudevice.h"
#include "engine/graph/graphfrommodel.h"
#include "engine/model/model.h"

namespace trainbench::bench {

engine::graph::Graph workloadGraph(const std::string& workload) {
    const std::string preset = workload == "w1" ? "mlp" : "cnn";
    const engine::ModelSpec spec{preset, engine::presetLayers(preset), {}, {}, {}};
    engine::CpuDevice dev(1);
    engine::Model m(spec, {1, 28, 28}, 10, dev, 42);
    engine::graph::Graph g = engine::graph::graphFromModel(spec, {1, 28, 28}, 10,
                                                           {m.params(), static_cast<size_t>(m.paramCount())}, m.state());
    g.metadata.input_scale = 1.0f / 255.0f;
    return g;
}

app::loadtest::ExampleSet testImages(const std::string& dir, int64_t count) {
    app::loadtest::ExampleSet e = app::loadtest::loadIdxExamples(dir + "/t10k-images-idx3-ubyte.gz", count);
    e.shape = {1, 28, 28};
    return e;
}

}  // namespace trainbench::bench
