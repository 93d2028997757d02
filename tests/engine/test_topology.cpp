// Topologies (validation and what they report) and Cloud TPU slice names: chips, torus shape and
// wrap-around as Google documents them, and bad names rejected with the valid ones listed.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "engine/emulation/tpuslice.h"
#include "engine/emulation/topology.h"
#include "tests/engine/collectivelinks.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

using test::errorOf;
using test::kLink;

TEST(Topology, CountsChipsAndCores) {
    EXPECT_EQ(ringTopology(8, kLink).nodes(), 8);
    EXPECT_EQ(torusTopology({4, 8}, {false, true}, kLink).chips(), 32);
    const Topology t = withOnChip(torusTopology({4, 4, 4}, {true, true, true}, kLink), 2, kLink);
    EXPECT_EQ(t.chips(), 64);
    EXPECT_EQ(t.nodes(), 128);
    EXPECT_EQ(t.describe(), "torus 4x4x4 (wrap x,y,z) + 2 cores/chip");
    EXPECT_EQ(torusTopology({8, 16}, {false, true}, kLink).describe(), "torus 8x16 (wrap y)");
    EXPECT_EQ(LinkParams::fromBandwidth(1e-6, 1e9).beta_s_per_byte, 1e-9);
}

TEST(Topology, InvalidShapesNameTheField) {
    EXPECT_NE(errorOf<std::invalid_argument>([] { ringTopology(0, kLink); }).find("dims[0]: must be >= 1, got 0"), std::string::npos);
    EXPECT_NE(errorOf<std::invalid_argument>([] { torusTopology({4, 4}, {true}, kLink); }).find("wrap: one flag per dimension"), std::string::npos);
    EXPECT_NE(errorOf<std::invalid_argument>([] { torusTopology({2, 2, 2, 2}, {true, true, true, true}, kLink); }).find("1 to 3 dimensions"),
              std::string::npos);
    EXPECT_NE(errorOf<std::invalid_argument>([] { torusTopology({}, {}, kLink); }).find("1 to 3 dimensions"), std::string::npos);
    EXPECT_NE(errorOf<std::invalid_argument>([] { ringTopology(4, LinkParams{-1e-6, 1e-9}); }).find("link.alpha_s"), std::string::npos);
    EXPECT_NE(errorOf<std::invalid_argument>([] { ringTopology(4, LinkParams{1e-6, std::nan("")}); }).find("link.beta_s_per_byte"), std::string::npos);
    EXPECT_NE(errorOf<std::invalid_argument>([] { withOnChip(ringTopology(4, kLink), 0, kLink); }).find("on_chip.cores_per_chip"), std::string::npos);
    Topology ring = ringTopology(4, kLink);
    ring.wrap = {true};
    EXPECT_NE(errorOf<std::invalid_argument>([&] { validateTopology(ring); }).find("only a torus has wrap-around"), std::string::npos);
}

void expectSlice(const std::string& name, int chips, std::vector<int> dims, std::vector<bool> wrap) {
    const TpuSlice s = parseTpuSlice(name);
    EXPECT_EQ(s.chips(), chips) << name;
    EXPECT_EQ(s.dims, dims) << name;
    EXPECT_EQ(s.wrap, wrap) << name;
    EXPECT_EQ(s.cores, 2 * chips) << name;
}

TEST(TpuSlice, ShapesAndWrapAround) {
    expectSlice("v3-8", 4, {2, 2}, {false, false});
    expectSlice("v3-32", 16, {4, 4}, {false, false});
    expectSlice("v3-1024", 512, {16, 32}, {false, true});  // spans the 32x32 pod in y only
    expectSlice("v3-2048", 1024, {32, 32}, {true, true});  // the whole pod
    expectSlice("v2-512", 256, {16, 16}, {true, true});
    expectSlice("v2-256", 128, {8, 16}, {false, true});
    expectSlice("v4-8", 4, {2, 2, 1}, {false, false, false});
    expectSlice("v4-64", 32, {2, 4, 4}, {false, false, false});  // less than one 4x4x4 cube: a mesh
    expectSlice("v4-128", 64, {4, 4, 4}, {true, true, true});
    expectSlice("v4-1536", 768, {8, 8, 12}, {true, true, true});
    expectSlice("v4-4096", 2048, {8, 16, 16}, {true, true, true});
}

TEST(TpuSlice, EveryListedNameParsesToItsCoreCount) {
    for (int generation : {2, 3, 4}) {
        const std::vector<std::string> names = tpuSliceNames(generation);
        EXPECT_EQ(names.front(), "v" + std::to_string(generation) + "-8");
        for (const std::string& name : names) {
            const TpuSlice s = parseTpuSlice(name);
            EXPECT_EQ(s.generation, generation);
            EXPECT_EQ(s.dims.size(), generation == 4 ? 3u : 2u) << name;
            EXPECT_EQ(std::accumulate(s.dims.begin(), s.dims.end(), 1, std::multiplies<>()), s.chips()) << name;
            EXPECT_EQ("v" + std::to_string(generation) + "-" + std::to_string(s.cores), name);
        }
    }
    EXPECT_EQ(tpuSliceNames(3).back(), "v3-2048");
    EXPECT_EQ(tpuSliceNames(4).back(), "v4-4096");
    EXPECT_TRUE(tpuSliceNames(5).empty());
}

TEST(TpuSlice, InvalidNamesListTheValidOnes) {
    EXPECT_EQ(errorOf<std::invalid_argument>([] { parseTpuSlice("v3-48"); }),
              "TPU slice 'v3-48': no such slice; v3 slices have 8, 32, 64, 128, 256, 512, 1024 or 2048 TensorCores");
    EXPECT_NE(errorOf<std::invalid_argument>([] { parseTpuSlice("v2-64"); }).find("v2 slices have 8, 32, 128, 256 or 512 TensorCores"),
              std::string::npos);
    EXPECT_NE(errorOf<std::invalid_argument>([] { parseTpuSlice("v4-8192"); }).find("384"), std::string::npos);
    EXPECT_EQ(errorOf<std::invalid_argument>([] { parseTpuSlice("v5-8"); }),
              "TPU slice 'v5-8': TPU v5 is not modelled; the generations are v2, v3 and v4");
    for (const char* bad : {"", "v3", "v3-", "-8", "V3-8", "tpu-v3-8", "v3-8x", "v3-032", "v3_8", "vx-8"}) {
        const std::string message = errorOf<std::invalid_argument>([&] { parseTpuSlice(bad); });
        EXPECT_NE(message.find("TPU slice '" + std::string(bad) + "'"), std::string::npos) << bad;
        EXPECT_FALSE(message.empty()) << bad;
    }
    EXPECT_NE(errorOf<std::invalid_argument>([] { parseTpuSlice("v3_8"); }).find("expected v<generation>-<TensorCores>"), std::string::npos);
}

TEST(TpuSlice, TopologyIsTheChipTorusWithTwoCoresPerChip) {
    const LinkParams onChip = LinkParams::fromBandwidth(1e-6, 50e9);
    const Topology t = sliceTopology(parseTpuSlice("v4-128"), kLink, onChip);
    EXPECT_EQ(t.kind, TopologyKind::Torus);
    EXPECT_EQ(t.dims, (std::vector<int>{4, 4, 4}));
    EXPECT_EQ(t.wrap, (std::vector<bool>{true, true, true}));
    ASSERT_TRUE(t.on_chip.has_value());
    EXPECT_EQ(t.on_chip->cores_per_chip, 2);
    EXPECT_EQ(t.on_chip->link.alpha_s, 1e-6);
    EXPECT_EQ(t.nodes(), 128);
    EXPECT_EQ(t.link.beta_s_per_byte, kLink.beta_s_per_byte);
}

}  // namespace
}  // namespace trainbench::engine
