// The inference path against an independent implementation: PyTorch's eval-mode logits for W2 and
// for a conv + batch norm + bottleneck model, on the same weights and pixels
// (tests/data/inference/make_fixtures.py wrote them). The weights enter through graphFromModel in
// the engine model's buffer order, so the test also pins that the graph reads PyTorch's layouts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/graph/graphpasses.h"
#include "engine/graph/referenceevaluator.h"
#include "engine/inference/compiledgraph.h"
#include "tests/engine/inferencemodels.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

using namespace testmodels;
using namespace testinference;

struct TorchFixture {
    std::vector<float> params, state, pixels;
    Dims shape;
    int64_t count = 0;
    float inputScale = 1.0f;
    std::vector<float> logits;
};

TorchFixture loadFixture(const std::string& name) {
    const std::string dir = std::string(TRAINBENCH_TEST_DATA_DIR) + "/inference/";
    const nlohmann::json m = nlohmann::json::parse(test::readText(dir + name + ".json"));
    const std::string blob = test::readText(dir + name + ".bin");
    TorchFixture f;
    for (const auto& t : m.at("tensors")) {
        int64_t n = 1;
        for (int64_t d : t.at("dims")) n *= d;
        const size_t offset = t.at("offset");
        const float scale = t.at("scale");
        EXPECT_LE(offset + static_cast<size_t>(n), blob.size()) << t.at("name");
        auto& out = t.at("group") == "params" ? f.params : f.state;
        for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<float>(static_cast<int8_t>(blob[offset + i])) * scale);
    }
    const auto& in = m.at("inputs");
    f.shape = in.at("shape").get<Dims>();
    f.count = in.at("count");
    f.inputScale = in.at("input_scale");
    const size_t offset = in.at("offset");
    const size_t n = static_cast<size_t>(f.count * testref::product(f.shape));
    EXPECT_EQ(offset + n, blob.size());
    for (size_t i = 0; i < n; ++i) f.pixels.push_back(static_cast<float>(static_cast<uint8_t>(blob[offset + i])));
    f.logits = m.at("logits").get<std::vector<float>>();
    return f;
}

LayerSpec bottleneck(int width, int stride) {
    LayerSpec s = of(LayerKind::Bottleneck); s.filters = width; s.stride = stride; return s;
}

void expectTorchLogits(const ModelSpec& spec, const std::string& fixture) {
    const TorchFixture f = loadFixture(fixture);
    graph::Graph g = graph::graphFromModel(spec, f.shape, 10, f.params, f.state);
    g.metadata.input_scale = f.inputScale;
    ASSERT_EQ(f.logits.size(), static_cast<size_t>(f.count * 10));
    EXPECT_LE(maxRelativeError(graph::evaluateReference(g, f.pixels.data(), f.count), f.logits), 1e-5) << fixture;
    CpuDevice dev(2);
    for (bool fold : {false, true}) {
        inference::CompiledGraph c(fold ? graph::fuseRelu(graph::foldBatchNorm(g)) : g, dev);
        std::vector<float> logits(f.logits.size());
        c.run(f.pixels.data(), f.count, logits.data());
        EXPECT_LE(maxRelativeError(logits, f.logits), 1e-5) << fixture << (fold ? " folded" : "");
        // One example at a time gives the same logits as the batch.
        std::vector<float> one(10);
        c.run(f.pixels.data() + testref::product(f.shape), 1, one.data());
        EXPECT_LE(maxRelativeError(one, {f.logits.begin() + 10, f.logits.begin() + 20}), 1e-5) << fixture;
    }
}

TEST(InferenceTorch, W2MatchesPyTorch) { expectTorchLogits(preset("cnn"), "w2"); }

TEST(InferenceTorch, ConvBatchNormBottleneckMatchesPyTorch) {
    expectTorchLogits(custom({conv(16, 3, 1, 1, false), of(LayerKind::BatchNorm), relu, bottleneck(4, 2),
                              of(LayerKind::GlobalAvgPool), dense(10)}),
                      "convbn");
}

}  // namespace
}  // namespace trainbench::engine
