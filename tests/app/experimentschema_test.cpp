// The schema is the single source of truth: the docs and the engine agree with it.
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "app/experiment/experimentschema.h"
#include "app/experiment/suggest.h"

namespace trainbench::app {
namespace {

std::vector<std::string> readLines(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        std::string plain;  // backticks are formatting, not content
        for (char c : line)
            if (c != '`') plain += c;
        lines.push_back(plain);
    }
    return lines;
}

const std::string* findRow(const std::vector<std::string>& lines, const std::string& start) {
    for (const std::string& line : lines)
        if (line.rfind(start, 0) == 0) return &line;
    return nullptr;
}

void expectRowDescribes(const std::string* row, const SchemaKey& key, const std::string& label) {
    ASSERT_NE(row, nullptr) << "docs/experiment-format.md has no table row for " << label;
    EXPECT_NE(row->find(" " + std::string(schemaTypeName(key.type)) + " "), std::string::npos)
        << label << ": type '" << schemaTypeName(key.type) << "' missing in: " << *row;
    EXPECT_NE(row->find(key.defaultText()), std::string::npos)
        << label << ": default '" << key.defaultText() << "' missing in: " << *row;
    EXPECT_NE(row->find(key.rangeText()), std::string::npos)
        << label << ": range '" << key.rangeText() << "' missing in: " << *row;
}

// Every key of the schema has a row in the format doc giving its type, default and range.
TEST(ExperimentSchema, DocsDescribeEveryKeyAsTheSchemaDoes) {
    const auto lines = readLines(std::string(TRAINBENCH_SOURCE_DIR) + "/docs/experiment-format.md");
    ASSERT_FALSE(lines.empty()) << "docs/experiment-format.md not found";
    std::size_t checked = 0;
    // Sections nest (data.pipeline.prefetch): every leaf and every section gets its row.
    std::function<void(const SchemaKey&, const std::string&)> visit = [&](const SchemaKey& key, const std::string& path) {
        if (key.type == SchemaType::Object)
            EXPECT_NE(findRow(lines, "| " + path + " |"), nullptr) << "no row for section " << path;
        else
            expectRowDescribes(findRow(lines, "| " + path + " |"), key, path);
        ++checked;
        for (const SchemaKey& child : key.keys) visit(child, path + "." + child.key);
        for (const LayerType& layer : key.layerTypes) {
            EXPECT_NE(findRow(lines, "| " + layer.name + " |"), nullptr) << "no row for layer type " << layer.name;
            for (const SchemaKey& layerKey : layer.keys) {
                const std::string label = layer.name + " | " + layerKey.key;
                expectRowDescribes(findRow(lines, "| " + label + " |"), layerKey, label);
                ++checked;
            }
        }
    };
    for (const SchemaKey& top : experimentSchema().keys) visit(top, top.key);
    EXPECT_GT(checked, 70u);
}

TEST(ExperimentSchema, EveryPresetChoiceExistsInTheEngine) {
    const SchemaKey* model = experimentSchema().find("model");
    ASSERT_NE(model, nullptr);
    const SchemaKey* preset = model->find("preset");
    ASSERT_NE(preset, nullptr);
    for (const std::string& name : preset->choices) EXPECT_FALSE(engine::presetLayers(name).empty()) << name;
}

TEST(ExperimentSchema, EveryLayerTypeNameMatchesTheEngineKind) {
    const SchemaKey* layers = experimentSchema().find("model")->find("layers");
    ASSERT_NE(layers, nullptr);
    EXPECT_EQ(layers->layerTypes.size(), 9u);
    for (const LayerType& t : layers->layerTypes) EXPECT_EQ(t.name, engine::layerKindName(t.kind));
}

TEST(ExperimentSchema, JsonFormDescribesKeysForAForm) {
    const nlohmann::json schema = experimentSchemaJson();
    ASSERT_TRUE(schema["keys"].is_array());
    const auto& train = *std::find_if(schema["keys"].begin(), schema["keys"].end(),
                                      [](const nlohmann::json& k) { return k["key"] == "train"; });
    EXPECT_EQ(train["type"], "object");
    const auto& batch = train["keys"][0];
    EXPECT_EQ(batch["key"], "batch_size");
    EXPECT_EQ(batch["type"], "integer");
    EXPECT_EQ(batch["default"], 128);
    EXPECT_EQ(batch["minimum"], 1);
    EXPECT_EQ(batch["maximum"], 65536);
    EXPECT_EQ(batch["range"], ">= 1 and <= 65536");
    EXPECT_FALSE(batch["description"].get<std::string>().empty());
    const auto& model = schema["keys"][4];
    EXPECT_EQ(model["key"], "model");
    EXPECT_EQ(model["one_of"], nlohmann::json({"preset", "layers", "onnx"}));
    EXPECT_EQ(model["keys"][1]["layer_types"][0]["type"], "dense");
}

TEST(Suggest, EditDistanceCountsTyposAndTranspositions) {
    EXPECT_EQ(editDistance("batch_size", "batch_size"), 0u);
    EXPECT_EQ(editDistance("bach_size", "batch_size"), 1u);
    EXPECT_EQ(editDistance("btach_size", "batch_size"), 1u);  // adjacent transposition
    EXPECT_EQ(editDistance("Adam", "adam"), 0u);
    EXPECT_EQ(editDistance("", "abc"), 3u);
}

TEST(Suggest, ClosestMatchOnlySuggestsPlausibleTypos) {
    const std::vector<std::string> keys = {"batch_size", "epochs", "max_steps", "threads"};
    EXPECT_EQ(closestMatch("epoch", keys), "epochs");
    EXPECT_EQ(closestMatch("batch", keys), "batch_size");  // prefix
    EXPECT_EQ(closestMatch("thread", keys), "threads");
    EXPECT_EQ(closestMatch("xyzzy", keys), std::nullopt);
    EXPECT_EQ(closestMatch("lr", keys), std::nullopt);
}

}  // namespace
}  // namespace trainbench::app
