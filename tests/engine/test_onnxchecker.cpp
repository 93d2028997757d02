// trainbench's ONNX exports judged by the onnx package itself (tests/data/onnx/check_export.py):
// onnx.checker (full check), strict shape inference, the opset, metadata and symbolic batch, and an
// independent numpy evaluation of each file against CompiledGraph's logits on the same examples —
// W1, W2 and resnet_small, as trained and folded, and a Gemm on a convolution's output; and their
// int8 models in the QDQ form against Int8CompiledGraph's. Skipped, saying why, when python3 has no
// onnx.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/inference/int8compiledgraph.h"
#include "engine/onnx/onnxexport.h"
#include "engine/onnx/onnxquantized.h"
#include "tests/engine/onnxgraphs.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

void writeFloats(const std::string& path, const std::vector<float>& v) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    ASSERT_TRUE(f.good()) << path;
}

// The command's exit status and its output (stdout and stderr).
std::pair<int, std::string> run(const std::string& command) {
    std::string out;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (!p) return {-1, "popen failed"};
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    return {::pclose(p), out};
}

// Debian's python3-onnx installs for /usr/bin/python3; a python3 earlier on PATH (pyenv, venv) may
// not have it. The first interpreter that imports onnx and numpy, or "".
std::string pythonWithOnnx() {
    for (const char* python : {"/usr/bin/python3", "python3"})
        if (run(std::string(python) + " -c 'import onnx, numpy'").first == 0) return python;
    return {};
}

class OnnxChecker : public test::TempDirTest {};

TEST_F(OnnxChecker, ExportsPassOnnxCheckerShapeInferenceAndANumpyEvaluation) {
    const std::string python = pythonWithOnnx();
    if (python.empty())
        GTEST_SKIP() << "python3 with the onnx package (Debian: python3-onnx) is not installed; "
                        "tests/data/onnx/check_export.py cannot run";
    CpuDevice dev(2);
    const int64_t n = 3;
    std::vector<float> pixels = testref::randomValues(n * 28 * 28, 5, 0.0f, 255.0f);
    for (float& v : pixels) v = std::floor(v);
    for (const char* preset : {"mlp", "cnn", "resnet_small"}) {
        const graph::Graph trained = testonnx::trainedGraph(preset, dev);
        for (const bool folded : {false, true}) {
            const graph::Graph g = folded ? graph::optimizeForInference(trained) : trained;
            const std::string stem = path(std::string(preset) + (folded ? "-folded" : ""));
            onnx::writeOnnx(g, stem + ".onnx", {"test"});
            inference::CompiledGraph c(g, dev);
            std::vector<float> logits(static_cast<size_t>(n * g.classes));
            c.run(pixels.data(), n, logits.data());
            writeFloats(stem + ".input.bin", pixels);
            writeFloats(stem + ".logits.bin", logits);
        }
    }
    // A Gemm on a convolution's [C, H, W] output, exported with a Flatten before it.
    const graph::Graph g = testonnx::convThenGemm();
    onnx::writeOnnx(g, path("conv-gemm.onnx"), {"test"});
    inference::CompiledGraph c(g, dev);
    std::vector<float> x = testref::randomValues(n * 16, 6), logits(static_cast<size_t>(n * g.classes));
    c.run(x.data(), n, logits.data());
    writeFloats(path("conv-gemm.input.bin"), x);
    writeFloats(path("conv-gemm.logits.bin"), logits);
    const auto [status, output] = run(python + " " TRAINBENCH_SOURCE_DIR "/tests/data/onnx/check_export.py " + dir_.string());
    EXPECT_EQ(status, 0) << output;
    std::printf("%s", output.c_str());
}

// The int8 models of W1, W2 and resnet_small in their QDQ form: the checker, strict shape inference,
// the QDQ checks, and a numpy evaluation of the QDQ graph against Int8CompiledGraph's logits, on the
// calibration examples (within the calibrated ranges, where ONNX's 8-bit saturation and trainbench's
// 7-bit codes without VNNI agree). onnx 1.12 has no onnx.reference to run the file with.
TEST_F(OnnxChecker, QuantizedModelsPassOnnxCheckerAndANumpyEvaluationOfTheQdqGraph) {
    const std::string python = pythonWithOnnx();
    if (python.empty())
        GTEST_SKIP() << "python3 with the onnx package (Debian: python3-onnx) is not installed; "
                        "tests/data/onnx/check_export.py cannot run";
    CpuDevice dev(2);
    const int64_t n = 5;
    const std::vector<float> pixels = testonnx::pixels(32, 5);  // the first calibration examples
    for (const char* preset : {"mlp", "cnn", "resnet_small"}) {
        const inference::QuantizedGraph q = testonnx::quantizedGraph(preset, dev);
        const std::string stem = path(std::string(preset) + "-int8");
        onnx::QuantizationRecord record;
        record.fp32_weight_bytes = inference::fp32WeightBytes(q.dequantized());
        record.int8_weight_bytes = q.weightBytes();
        onnx::writeQuantizedOnnx(q, record, stem + ".onnx", {"test"});
        inference::Int8CompiledGraph c(q, dev);
        std::vector<float> logits(static_cast<size_t>(n * q.graph.classes));
        c.run(pixels.data(), n, logits.data());
        writeFloats(stem + ".input.bin", std::vector<float>(pixels.begin(), pixels.begin() + n * 28 * 28));
        writeFloats(stem + ".logits.bin", logits);
    }
    const auto [status, output] = run(python + " " TRAINBENCH_SOURCE_DIR "/tests/data/onnx/check_export.py " + dir_.string());
    EXPECT_EQ(status, 0) << output;
    std::printf("%s", output.c_str());
}

}  // namespace
}  // namespace trainbench::engine
