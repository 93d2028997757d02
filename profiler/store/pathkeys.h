#pragma once
// Which values of the run store are paths: the experiment keys of runs.config_json, and the run
// attributes that hold a path or a description naming one. RunStoreFolder records the paths inside
// the store's folder relative to it (docs/run-store.md, "Paths"). The profiler may not use app's
// schema (design.md: engine <- profiler <- app), so the experiment's path keys are listed here;
// tests/app/storepathkeys_test.cpp holds the list to the schema.
#include <string>
#include <vector>

namespace trainbench::profiler {

// Dotted keys of the resolved experiment whose values are paths (schema type "path").
const std::vector<std::string>& experimentPathKeys();

enum class AttributeKind {
    Plain,          // a number, a flag, a name: recorded as given
    Path,           // one file or folder (checkpoint.path, warm_start.checkpoint)
    TextWithPaths,  // a description for people that may name files (input.source)
};

AttributeKind attributeKind(const std::string& key);

}  // namespace trainbench::profiler
