// importOnnx on arbitrary bytes: it either gives a graph that validates or throws OnnxError whose
// message starts with the file's name; it never crashes, hangs or allocates what the bytes do not
// hold (initializer element counts are checked against the bytes present first). A graph that
// imports exports to a model that imports to the same export: nothing is lost on the way.
#include <string>
#include <string_view>

#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxexport.h"
#include "engine/onnx/onnximport.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::mismatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    graph::Graph g;
    try {
        g = onnx::importOnnx(bytes, "fuzz.onnx");
    } catch (const onnx::OnnxError& e) {
        if (std::string(e.what()).rfind("fuzz.onnx: ", 0) != 0) mismatch(std::string("message without the file: ") + e.what());
        return 0;
    }
    try {
        const std::string once = onnx::exportOnnx(g);
        const std::string twice = onnx::exportOnnx(onnx::importOnnx(once, "export.onnx"));
        if (once != twice) mismatch("an imported graph's export, imported and exported again, differs");
    } catch (const std::exception& e) {
        mismatch(std::string("an imported graph does not export and import again: ") + e.what());
    }
    return 0;
}
