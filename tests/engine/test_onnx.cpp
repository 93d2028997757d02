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

using testonnx::expectSameGraph;

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
