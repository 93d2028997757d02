// Key paths as messages print them: members joined by '.', elements in brackets, nothing before a
// top-level key.
#include "engine/util/keypath.h"

#include <gtest/gtest.h>

namespace trainbench::engine {
namespace {

TEST(KeyPath, MembersAndElementsSpellAsInExperimentFiles) {
    EXPECT_EQ(keyPathMember("", "train"), "train");
    EXPECT_EQ(keyPathMember("train", "batch_size"), "train.batch_size");
    EXPECT_EQ(keyPathElement("model.layers", 2), "model.layers[2]");
    EXPECT_EQ(keyPathMember(keyPathElement("model.layers", 2), "units"), "model.layers[2].units");
    EXPECT_EQ(keyPathElement(keyPathElement("sweep.seed", 0), 10), "sweep.seed[0][10]");
    EXPECT_EQ(keyPathElement("", 0), "[0]");  // a top-level array
}

}  // namespace
}  // namespace trainbench::engine
