// ONNX export and import of our own graphs (engine/onnx): import(export(g)) is g exactly — the
// same initializer bytes, the same nodes (fused ReLUs re-fused), the same metadata — and its
// predictions through CompiledGraph are bit-identical; for W1, W2 and resnet_small, as trained and
// folded for inference. A file on disk reads back the same.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/onnx/onnxexport.h"
#include "engine/onnx/onnximport.h"
#include "tests/engine/onnxgraphs.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

void expectSameGraph(const graph::Graph& got, const graph::Graph& want) {
    EXPECT_EQ(got.input, want.input);
    EXPECT_EQ(got.sample_shape, want.sample_shape);
    EXPECT_EQ(got.output, want.output);
    EXPECT_EQ(got.classes, want.classes);
    ASSERT_EQ(got.nodes.size(), want.nodes.size());
    for (size_t i = 0; i < want.nodes.size(); ++i) {
        const graph::Node &a = got.nodes[i], &b = want.nodes[i];
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.kind, b.kind) << b.name;
        EXPECT_EQ(a.inputs, b.inputs) << b.name;
        EXPECT_EQ(a.output, b.output) << b.name;
        EXPECT_EQ(a.fused_relu, b.fused_relu) << b.name;
        if (b.kind == graph::OpKind::Conv || b.kind == graph::OpKind::MaxPool) {
            EXPECT_EQ(a.kernel, b.kernel) << b.name;
            EXPECT_EQ(a.stride, b.stride) << b.name;
            EXPECT_EQ(a.pad, b.pad) << b.name;
        }
        if (b.kind == graph::OpKind::BatchNormalization) {
            EXPECT_EQ(std::memcmp(&a.epsilon, &b.epsilon, sizeof(float)), 0) << b.name;
        }
    }
    ASSERT_EQ(got.initializers.size(), want.initializers.size());
    for (const auto& [name, init] : want.initializers) {
        const auto it = got.initializers.find(name);
        ASSERT_NE(it, got.initializers.end()) << name;
        EXPECT_EQ(it->second.dims, init.dims) << name;
        ASSERT_EQ(it->second.values.size(), init.values.size()) << name;
        EXPECT_EQ(std::memcmp(it->second.values.data(), init.values.data(), init.values.size() * sizeof(float)), 0) << name;
    }
    EXPECT_EQ(got.metadata.producer, want.metadata.producer);
    EXPECT_EQ(got.metadata.source_run, want.metadata.source_run);
    EXPECT_EQ(std::memcmp(&got.metadata.input_scale, &want.metadata.input_scale, sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(&got.metadata.input_shift, &want.metadata.input_shift, sizeof(float)), 0);
    EXPECT_EQ(got.metadata.class_names, want.metadata.class_names);
}

std::vector<float> predict(const graph::Graph& g, CpuDevice& dev, const std::vector<float>& x, int64_t n) {
    inference::CompiledGraph c(g, dev);
    std::vector<float> logits(static_cast<size_t>(n * g.classes));
    c.run(x.data(), n, logits.data());
    return logits;
}

class OnnxRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxRoundTrip, ImportOfExportIsExactAsTrainedAndFolded) {
    CpuDevice dev(2);
    const graph::Graph trained = testonnx::trainedGraph(GetParam(), dev);
    const int64_t n = 9;
    std::vector<float> pixels = testref::randomValues(n * 28 * 28, 77, 0.0f, 255.0f);
    for (const graph::Graph& g : {trained, graph::optimizeForInference(trained)}) {
        const graph::Graph back = onnx::importOnnx(onnx::exportOnnx(g, {"test"}), "memory");
        expectSameGraph(back, g);
        EXPECT_EQ(predict(back, dev, pixels, n), predict(g, dev, pixels, n)) << GetParam();
        // Exporting the import gives the same bytes: nothing is lost or added on the way.
        EXPECT_EQ(onnx::exportOnnx(back, {"test"}), onnx::exportOnnx(g, {"test"}));
    }
}

INSTANTIATE_TEST_SUITE_P(Presets, OnnxRoundTrip, ::testing::Values("mlp", "cnn", "resnet_small"),
                         [](const auto& p) { return std::string(p.param); });

// A Gemm on a rank > 2 input: the export's Flatten is removed again on import.
TEST(OnnxRoundTrip, AGemmOnAConvolutionsOutputComesBackWithoutTheExportsFlatten) {
    CpuDevice dev(1);
    const graph::Graph g = testonnx::convThenGemm();
    const graph::Graph back = onnx::importOnnx(onnx::exportOnnx(g), "memory");
    expectSameGraph(back, g);
    const std::vector<float> x = testref::randomValues(2 * 16, 9);
    EXPECT_EQ(predict(back, dev, x, 2), predict(g, dev, x, 2));
}

class OnnxFile : public test::TempDirTest {};

TEST_F(OnnxFile, WrittenFileReadsBackAndNamesItselfAsTheSourceWhenItHasNone) {
    CpuDevice dev(2);
    graph::Graph g = graph::optimizeForInference(testonnx::trainedGraph("cnn", dev));
    onnx::writeOnnx(g, path("cnn.onnx"));
    expectSameGraph(onnx::readOnnx(path("cnn.onnx")), g);
    g.metadata.source_run.clear();
    onnx::writeOnnx(g, path("anonymous.onnx"));
    EXPECT_EQ(onnx::readOnnx(path("anonymous.onnx")).metadata.source_run, "ONNX file " + path("anonymous.onnx"));
}

}  // namespace
}  // namespace trainbench::engine
