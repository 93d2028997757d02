#include "profiler/store/pathkeys.h"

namespace trainbench::profiler {

const std::vector<std::string>& experimentPathKeys() {
    static const std::vector<std::string> keys = {
        "data.path", "data.train_files", "data.test_files", "device.catalog", "train.checkpoint_path",
        "train.warm_start.checkpoint",
    };
    return keys;
}

AttributeKind attributeKind(const std::string& key) {
    if (key == "checkpoint.path" || key == "warm_start.checkpoint") return AttributeKind::Path;
    if (key == "input.source") return AttributeKind::TextWithPaths;
    return AttributeKind::Plain;
}

}  // namespace trainbench::profiler
