// `trainbench-cli export-model`: a run's model (or an ONNX file's) written as an ONNX file that other
// runtimes load, as trained or folded for inference (docs/onnx.md).
#include <cstdio>
#include <stdexcept>
#include <string>

#include "app/cli/commands.h"
#include "app/inference/modelsource.h"
#include "app/run/exitcodes.h"
#include "app/run/versions.h"
#include "engine/graph/graphpasses.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxexport.h"
#include "engine/onnx/onnxformat.h"
#include "engine/onnx/onnxtext.h"
#include "engine/util/errors.h"

namespace trainbench::cli {

namespace {

std::string dimsText(const engine::graph::Dims& sample) {
    std::string s = "[N";
    for (int64_t d : sample) s += ", " + std::to_string(d);
    return s + "]";
}

// 535818 -> "535,818"
std::string grouped(uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

void printExport(const ExportModelArgs& args, const app::ModelSource& m, const engine::graph::Graph& g, size_t bytes) {
    namespace onnx = engine::onnx;
    std::printf("wrote %s: %s bytes, ONNX opset %lld (IR version %lld), %s parameters\n", args.output.c_str(),
                grouped(bytes).c_str(), static_cast<long long>(onnx::kOpsetVersion),
                static_cast<long long>(onnx::kIrVersion), grouped(static_cast<uint64_t>(g.parameterCount())).c_str());
    std::printf("  model: %s, %s\n", m.description.c_str(),
                args.folded ? "folded (batch norm folded into the layer before it, ReLUs fused)"
                : m.run     ? "as trained (batch norm and ReLUs as nodes of their own)"
                            : "as the file holds it");
    std::printf("  input: float %s, stored values x %s + %s (metadata %s, %s)\n", dimsText(g.sample_shape).c_str(),
                onnx::floatText(g.metadata.input_scale).c_str(), onnx::floatText(g.metadata.input_shift).c_str(),
                onnx::kKeyInputScale, onnx::kKeyInputShift);
    const std::string names = g.metadata.class_names.empty()
                                  ? "none (the data names none: a class is its index)"
                                  : onnx::classNamesText(g.metadata.class_names);
    std::printf("  output: logits [N, %lld]; class names: %s\n", static_cast<long long>(g.classes), names.c_str());
}

}  // namespace

int exportModelCommand(const ExportModelArgs& args) {
    if (!app::namesOnnxFile(args.output)) {
        std::fprintf(stderr, "export-model: -o %s: name the file FILE.onnx (the inference commands take a MODEL "
                             "ending in .onnx as an ONNX file)\n", args.output.c_str());
        return kExitUsage;
    }
    app::ModelSource m;
    try {
        m = app::openModel(args.model, args.db);
    } catch (const app::ModelNotFound& e) {
        std::fprintf(stderr, "export-model: %s\n", e.what());
        return kExitNotFound;
    } catch (const std::invalid_argument& e) {  // no checkpoint kept, a store that cannot be read
        std::fprintf(stderr, "export-model: %s\n", e.what());
        return kExitUsage;
    } catch (const engine::onnx::OnnxError& e) {  // MODEL is a file that is not a model we can read
        std::fprintf(stderr, "export-model: %s\n", e.what());
        return kExitUsage;
    } catch (const std::exception& e) {  // a checkpoint or data that cannot be read
        std::fprintf(stderr, "export-model: %s\n", e.what());
        return kExitRunFailed;
    }
    const engine::graph::Graph g = args.folded ? engine::graph::optimizeForInference(m.graph) : m.graph;
    engine::onnx::ExportOptions options;
    options.producer_version = app::trainbenchVersion();
    if (!m.name.empty()) options.graph_name = m.name;
    std::string bytes;
    try {
        bytes = engine::onnx::exportOnnx(g, options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "export-model: %s cannot be exported: %s\n", m.description.c_str(), e.what());
        return kExitRunFailed;
    }
    try {
        engine::writeFileAtomically(args.output, bytes, {.what = "ONNX model"});
    } catch (const engine::FileWriteError& e) {
        std::fprintf(stderr, "export-model: %s\n", e.what());
        return kExitIo;
    }
    printExport(args, m, g, bytes.size());
    return kExitOk;
}

}  // namespace trainbench::cli
