#include "app/inference/modelsource.h"

#include <stdexcept>
#include <utility>

#include "engine/graph/servablegraph.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"

namespace trainbench::app {

namespace {

struct StoredRun {
    profiler::RunRow row;
    std::string checkpoint;
};

StoredRun findRunWithCheckpoint(const std::string& model, const std::string& db) {
    try {
        profiler::RunStore store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        std::optional<profiler::RunRow> row = store.findRun(model);
        if (!row)
            throw std::invalid_argument("MODEL '" + model + "': there is no run '" + model + "' in " + db +
                                        " (trainbench-cli runs lists them)");
        for (const auto& [key, value] : store.attributes(row->id))
            if (key == profiler::runattr::kCheckpointPath) return {std::move(*row), value};
        throw std::invalid_argument("MODEL '" + model + "': run " + std::to_string(row->id.value) + " of " + db +
                                    " kept no checkpoint to serve (train it with train.checkpoint_at_end or "
                                    "train.checkpoint_every_steps)");
    } catch (const profiler::StoreError& e) {
        throw std::invalid_argument("MODEL '" + model + "': cannot look it up in " + db + ": " + e.what());
    }
}

}  // namespace

engine::graph::GraphMetadata metadataFor(const Experiment& experiment) {
    engine::graph::GraphMetadata m;
    // Every image source (IDX, TFRecord, image folders, example files) scales u8 pixels by 1/255 in
    // the pipeline (engine/data/batcher.cpp); CSV columns are features as they are.
    if (experiment.data.dataset != "csv") m.input_scale = 1.0f / 255.0f;
    return m;
}

ModelSource openModel(const std::string& model, const std::string& db) {
    StoredRun stored = findRunWithCheckpoint(model, db);
    const std::string runName = "run " + std::to_string(stored.row.id.value);
    Experiment x = parseExperiment(stored.row.config_json, runName + " of " + db);
    // Shape and classes are the data's: open it as the run did (one batch of the run's size).
    engine::TrainingData data = openTrainingData(x.data, x.train.batch_size, x.train.seed);
    engine::graph::ServableSource source;
    source.spec = x.model;
    source.sample_shape = {data.channels, data.height, data.width};
    source.classes = data.num_classes;
    source.metadata = metadataFor(x);
    source.metadata.source_run = runName + " (" + stored.row.name + ") of " + db;
    ModelSource m{engine::graph::loadServableGraph(stored.checkpoint, source), std::move(x), std::move(data),
                  stored.row.id, source.metadata.source_run + ", checkpoint " + stored.checkpoint,
                  stored.row.name};
    return m;
}

}  // namespace trainbench::app
