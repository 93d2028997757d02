#include "app/inference/modelsource.h"

#include <filesystem>
#include <stdexcept>
#include <utility>

#include "engine/graph/servablegraph.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnximport.h"
#include "engine/onnx/onnxtrainable.h"
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
            throw ModelNotFound("MODEL '" + model + "': there is no run '" + model + "' in " + db +
                                " (trainbench-cli runs lists them; an ONNX file's name ends in .onnx)");
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

namespace {

ModelSource openRun(const std::string& model, const std::string& db) {
    StoredRun stored = findRunWithCheckpoint(model, db);
    const std::string runName = "run " + std::to_string(stored.row.id.value);
    Experiment x = parseExperiment(stored.row.config_json, runName + " of " + db);
    // Shape and classes are the data's: open it as the run did (one batch of the run's size).
    engine::TrainingData data = openTrainingData(x.data, x.train.batch_size, x.train.seed);
    engine::graph::ServableSource source;
    // An imported model's run trained the layers its graph maps onto.
    source.spec = engine::onnx::trainableModel(x.model);
    source.sample_shape = {data.channels, data.height, data.width};
    source.classes = data.num_classes;
    source.metadata = metadataFor(x);
    source.metadata.source_run = runName + " (" + stored.row.name + ") of " + db;
    ModelSource m;
    m.graph = engine::graph::loadServableGraph(stored.checkpoint, source);
    m.run = ModelRun{stored.row.id, std::move(x), std::move(data)};
    m.description = source.metadata.source_run + ", checkpoint " + stored.checkpoint;
    m.name = stored.row.name;
    return m;
}

ModelSource openOnnxFile(const std::string& path) {
    ModelSource m;
    m.graph = engine::onnx::readOnnx(path);  // errors name `path` as given
    m.file = std::filesystem::absolute(path).lexically_normal().string();
    m.name = std::filesystem::path(path).stem().string();
    m.description = "ONNX file " + m.file;
    // readOnnx names the file when the model does not say where it came from.
    const std::string& from = m.graph.metadata.source_run;
    if (!from.empty() && from.rfind("ONNX file ", 0) != 0) m.description += " (exported from " + from + ")";
    return m;
}

}  // namespace

bool namesOnnxFile(const std::string& model) {
    const std::string ext = ".onnx";
    return model.size() > ext.size() && model.compare(model.size() - ext.size(), ext.size(), ext) == 0;
}

ModelSource openModel(const std::string& model, const std::string& db) {
    if (namesOnnxFile(model)) return openOnnxFile(model);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(model, ec)) return openRun(model, db);
    // A file of another name is a model when its bytes parse as one, else MODEL may still be a run
    // that happens to share its name; when it is neither, both reasons are given.
    try {
        return openOnnxFile(model);
    } catch (const engine::onnx::OnnxError& notOnnx) {
        try {
            return openRun(model, db);
        } catch (const std::invalid_argument& notRun) {
            throw engine::onnx::OnnxError(std::string(notOnnx.what()) + "; nor is it a run: " + notRun.what());
        }
    }
}

const ModelRun& requireRun(const ModelSource& m, const std::string& what) {
    if (!m.run)
        throw std::invalid_argument(what + " needs the model's training data, and " + m.description +
                                    " has none (an ONNX file holds the model alone): give a run of the store as MODEL");
    return *m.run;
}

}  // namespace trainbench::app
