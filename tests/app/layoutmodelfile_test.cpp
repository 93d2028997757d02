// The layout planner's model description file (app/plan/layoutmodelfile.h): the shipped GPT-3 file,
// and every problem of a bad one reported with its key.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "app/plan/layoutmodelfile.h"

namespace trainbench::app {
namespace {

std::string layoutFileError(const std::string& text) {
    try {
        parseLayoutModelText(text, "gpt.json");
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(LayoutModelFile, TheShippedGpt3FileIsGpt3) {
    const LayoutModel m = readLayoutModel(std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/models/gpt3-175b.json");
    EXPECT_EQ(m.costs.shape.name, "gpt3-175b");
    EXPECT_EQ(m.costs.shape.layers, 96);
    EXPECT_EQ(m.costs.shape.hidden, 12288);
    EXPECT_EQ(m.costs.shape.heads, 96);
    EXPECT_EQ(m.costs.shape.sequence, 2048);
    EXPECT_EQ(m.costs.shape.vocab, 51200);
    EXPECT_EQ(m.costs.shape.ffnWidth(), 4 * 12288);
    EXPECT_EQ(m.global_batch, 1536);
    EXPECT_NEAR(m.costs.params() / 1e9, 174.6, 0.1);
}

TEST(LayoutModelFile, EveryProblemIsNamedWithItsKey) {
    EXPECT_EQ(layoutFileError(R"({"name": "x", "layers": 0, "hiden": 5, "heads": "a", "sequence": 2048, "vocab": 10})"),
              "gpt.json: hiden: unknown key; did you mean 'hidden'?\n"
              "gpt.json: layers: expected a positive integer, got 0\n"
              "gpt.json: hidden: missing; expected a positive integer\n"
              "gpt.json: heads: expected a positive integer, got \"a\"");
    EXPECT_EQ(layoutFileError(R"({"layers": 2, "hidden": 10, "heads": 3, "sequence": 8, "vocab": 10})"),
              "gpt.json: heads: 3 heads do not divide the hidden size 10");
    EXPECT_EQ(layoutFileError(R"({"layers": 2, "hidden": 12, "heads": 3, "sequence": 8, "vocab": 10, "global_batch": -4})"),
              "gpt.json: global_batch: expected a positive integer, got -4");
    EXPECT_NE(layoutFileError(R"({"layers": 2,)").find("gpt.json:1:"), std::string::npos);
    EXPECT_EQ(layoutFileError("[1, 2]"), "gpt.json: expected a JSON object describing a transformer");
}

TEST(LayoutModelFile, AFileThatCannotBeReadSaysSo) {
    try {
        readLayoutModel("/nonexistent/gpt.json");
        FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "/nonexistent/gpt.json: cannot be read");
    }
}

}  // namespace
}  // namespace trainbench::app
