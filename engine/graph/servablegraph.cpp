#include "engine/graph/servablegraph.h"

#include "engine/checkpoint/modellayout.h"
#include "engine/checkpoint/trainingcheckpoint.h"
#include "engine/graph/graphfrommodel.h"
#include "engine/model/layerstack.h"
#include "engine/util/errors.h"

namespace trainbench::engine::graph {

Graph loadServableGraph(const std::string& checkpointPath, const ServableSource& source) {
    const Checkpoint ck = Checkpoint::read(checkpointPath);
    {
        // The spec's layers (no parameters allocated) against the layout the checkpoint recorded.
        CpuDevice device(1);
        const LayerStack stack = buildLayerStack(source.spec, source.sample_shape, source.classes, device);
        checkModelLayout(ck, modelLayout(stack.layers));
        if (stack.stateCount > 0 && !ck.has(kModelStateShard))
            throw CheckpointError(checkpointPath + ": the checkpoint does not fit the run's model: it has no shard '" +
                                  kModelStateShard + "' (the running statistics of its batch norm layers)");
    }
    const std::vector<float> params = ck.floats(kParamsShard);
    const std::vector<float> state = ck.has(kModelStateShard) ? ck.floats(kModelStateShard) : std::vector<float>{};
    Graph g;
    try {
        g = graphFromModel(source.spec, source.sample_shape, source.classes, params, state);
    } catch (const GraphError& e) {
        throw CheckpointError(checkpointPath + ": the checkpoint does not fit the run's model: " + e.what());
    }
    g.metadata = source.metadata;
    if (g.metadata.source_run.empty()) g.metadata.source_run = "checkpoint " + checkpointPath;
    g.validate();
    return g;
}

}  // namespace trainbench::engine::graph
