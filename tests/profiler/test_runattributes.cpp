// The run-attribute keys (profiler/store/runattributes.h): each named once, in the store's dotted
// form, in a group readers can select by, and documented in docs/run-store.md. What runs actually
// write is held to the table end to end in tests/integration/cli_runattributes_test.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "profiler/store/runattributes.h"

namespace trainbench::profiler::runattr {
namespace {

TEST(RunAttributes, EachKeyIsNamedOnceInTheStoresDottedForm) {
    std::set<std::string_view> seen;
    const std::regex dotted("[a-z_]+\\.[a-z0-9_]+");
    for (const RunAttribute& a : kRunAttributes) {
        EXPECT_TRUE(seen.insert(a.key).second) << a.key << " is in kRunAttributes twice";
        EXPECT_TRUE(std::regex_match(std::string(a.key), dotted)) << a.key;
    }
    EXPECT_EQ(seen.size(), kRunAttributes.size());
}

TEST(RunAttributes, EveryGroupHoldsKeys) {
    for (std::string_view group : {kInputGroup, kStorageGroup, kPsGroup, kVirtualGroup, kMemoryGroup}) {
        int keys = 0;
        for (const RunAttribute& a : kRunAttributes) keys += a.key.starts_with(group) ? 1 : 0;
        EXPECT_GE(keys, 1) << "no key in group " << group;
        EXPECT_EQ(group.back(), '.') << group << ": a group is a prefix up to its dot";
    }
}

TEST(RunAttributes, DocsRunStoreNamesEveryKey) {
    std::ifstream in(std::string(TRAINBENCH_SOURCE_DIR) + "/docs/run-store.md");
    ASSERT_TRUE(in) << "docs/run-store.md";
    std::stringstream text;
    text << in.rdbuf();
    for (const RunAttribute& a : kRunAttributes)
        EXPECT_NE(text.str().find("`" + std::string(a.key) + "`"), std::string::npos)
            << a.key << " is not documented in docs/run-store.md (run_attributes)";
}

}  // namespace
}  // namespace trainbench::profiler::runattr
