// The run store records the experiment's paths inside its folder relative to it, from a list of
// its own (profiler/store/pathkeys.h: the profiler may not use app's schema); this holds that list
// to the schema, so that a path key added to the schema is not left absolute in moved stores.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app/experiment/experimentschema.h"
#include "profiler/store/pathkeys.h"

namespace trainbench::app {
namespace {

void collectPaths(const SchemaKey& key, const std::string& dotted, std::vector<std::string>& out) {
    if (key.type == SchemaType::Path) out.push_back(dotted);
    for (const SchemaKey& k : key.keys) collectPaths(k, dotted.empty() ? k.key : dotted + "." + k.key, out);
    for (const LayerType& layer : key.layerTypes)
        for (const SchemaKey& k : layer.keys)
            EXPECT_NE(k.type, SchemaType::Path) << dotted << "[]." << k.key << ": a path inside a list of layers "
                                                << "needs RunStoreFolder to map list elements";
}

TEST(StorePathKeys, AreThePathKeysOfTheExperimentSchema) {
    std::vector<std::string> schema;
    collectPaths(experimentSchema(), "", schema);
    std::vector<std::string> store = profiler::experimentPathKeys();
    std::sort(schema.begin(), schema.end());
    std::sort(store.begin(), store.end());
    EXPECT_EQ(store, schema);
}

}  // namespace
}  // namespace trainbench::app
