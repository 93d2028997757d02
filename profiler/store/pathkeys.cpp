#include "profiler/store/pathkeys.h"

#include "profiler/store/runattributes.h"

namespace trainbench::profiler {

const std::vector<std::string>& experimentPathKeys() {
    static const std::vector<std::string> keys = {
        "data.path", "data.train_files", "data.test_files", "device.catalog", "train.checkpoint_path",
        "train.warm_start.checkpoint",
        "model.onnx",
    };
    return keys;
}

AttributeKind attributeKind(const std::string& key) {
    if (key == runattr::kCheckpointPath || key == runattr::kWarmStartCheckpoint) return AttributeKind::Path;
    if (key == runattr::kInputSource) return AttributeKind::TextWithPaths;
    return AttributeKind::Plain;
}

}  // namespace trainbench::profiler
