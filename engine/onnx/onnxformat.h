#pragma once
// What trainbench writes into an ONNX file beyond the ops, shared by the exporter and the importer
// (docs/onnx.md lists them): the opset and IR version, the metadata_props keys, and the names of the
// nodes an export adds because ONNX has no fused ReLU and no Gemm over a rank > 2 input.
#include <cstdint>
#include <string>

namespace trainbench::engine::onnx {

// onnx 1.12 (Debian 12's libonnx and python3-onnx): IR version 8; opset 13 is the one every runtime
// of the last years reads, and none of the ops we use changed between 13 and 17.
inline constexpr int64_t kIrVersion = 8;
inline constexpr int64_t kOpsetVersion = 13;
// Default-domain opsets an import accepts: the ops of the Graph IR mean the same in all of them
// (BatchNormalization in inference mode, Conv / MaxPool with explicit pads).
inline constexpr int64_t kMinImportOpset = 9, kMaxImportOpset = 17;

// The batch dimension's symbolic name on the input and output.
inline constexpr const char* kBatchDim = "N";

// metadata_props keys.
inline constexpr const char* kKeyInputScale = "trainbench.input_scale";  // shortest decimal that reads back exactly
inline constexpr const char* kKeyInputShift = "trainbench.input_shift";
inline constexpr const char* kKeyClassNames = "trainbench.class_names";  // JSON array of strings
inline constexpr const char* kKeySourceRun = "trainbench.source_run";

// A node with fused_relu is written as the node, writing "<node>/pre_relu", and a Relu node named
// "<node>/fused_relu" reading it and writing the node's output; the importer re-fuses exactly these.
inline std::string preReluValue(const std::string& node) { return node + "/pre_relu"; }
inline std::string fusedReluNode(const std::string& node) { return node + "/fused_relu"; }
// A Gemm whose input has rank > 2 (the IR flattens it) is preceded by a Flatten named
// "<gemm>/gemm_flatten" writing "<gemm>/gemm_flat", which the importer folds back.
inline std::string gemmFlattenNode(const std::string& gemm) { return gemm + "/gemm_flatten"; }
inline std::string gemmFlatValue(const std::string& gemm) { return gemm + "/gemm_flat"; }

// Caps an import checks before it allocates: the file, and the elements of one initializer.
inline constexpr int64_t kMaxFileBytes = int64_t{1} << 30;
inline constexpr int64_t kMaxInitializerElements = int64_t{1} << 28;

}  // namespace trainbench::engine::onnx
