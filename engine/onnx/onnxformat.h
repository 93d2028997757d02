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
inline constexpr int64_t kLayerNormOpsetVersion = 17;  // a graph with LayerNormalization
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

// A quantized model's (onnxquantized.h) besides those: what it is, the calibration it used
// (CalibrationRecord, engine/inference/quantizedgraph.h), its size and its accuracy next to fp32's.
inline constexpr const char* kKeyPrecision = "trainbench.precision";  // "int8"
inline constexpr const char* kKeyCalibrationBatches = "trainbench.calibration.batches";
inline constexpr const char* kKeyCalibrationBatchSize = "trainbench.calibration.batch_size";
inline constexpr const char* kKeyCalibrationExamples = "trainbench.calibration.examples";
inline constexpr const char* kKeyCalibrationMethod = "trainbench.calibration.method";          // minmax | percentile
inline constexpr const char* kKeyCalibrationPercentile = "trainbench.calibration.percentile";  // of |x|; 100 for minmax
inline constexpr const char* kKeyCalibrationSeed = "trainbench.calibration.seed";
inline constexpr const char* kKeyCalibrationU8Levels = "trainbench.calibration.u8_levels";     // 255, or 127 without VNNI
inline constexpr const char* kKeyInt8WeightBytes = "trainbench.int8_weight_bytes";
inline constexpr const char* kKeyFp32WeightBytes = "trainbench.fp32_weight_bytes";
inline constexpr const char* kKeyTestExamples = "trainbench.test_examples";
inline constexpr const char* kKeyFp32TestAccuracy = "trainbench.fp32_test_accuracy";  // top-1, a fraction
inline constexpr const char* kKeyInt8TestAccuracy = "trainbench.int8_test_accuracy";
inline constexpr const char* kKeyIsa = "trainbench.isa";  // the oneDNN ISA the accuracy was measured with

// A quantized model's QDQ form. A weight W of a Conv or Gemm is the int8 initializer "W/quantized"
// with "W/scale" (float [out]) and "W/zero_point" (int8 [out], zeros), dequantized (axis 0) by the
// node "W/dequantize" into W. An activation v is followed by "v/quantize" (QuantizeLinear, scalars
// "v/scale" and "v/zero_point": uint8 or int8 0) writing "v/quantized" and "v/dequantize" writing
// "v/dequantized", which its readers read; the graph's output keeps its name (the op writes
// "v/float" then).
inline std::string quantizedName(const std::string& v) { return v + "/quantized"; }
inline std::string dequantizedName(const std::string& v) { return v + "/dequantized"; }
inline std::string floatName(const std::string& v) { return v + "/float"; }
inline std::string scaleName(const std::string& v) { return v + "/scale"; }
inline std::string zeroPointName(const std::string& v) { return v + "/zero_point"; }
inline std::string quantizeNode(const std::string& v) { return v + "/quantize"; }
inline std::string dequantizeNode(const std::string& v) { return v + "/dequantize"; }

// A node with fused_relu is written as the node, writing "<node>/pre_relu", and a Relu node named
// "<node>/fused_relu" reading it and writing the node's output; the importer re-fuses exactly these.
inline std::string preReluValue(const std::string& node) { return node + "/pre_relu"; }
inline std::string fusedReluNode(const std::string& node) { return node + "/fused_relu"; }
// A Gemm whose input has rank > 2 (the IR flattens it) is preceded by a Flatten named
// "<gemm>/gemm_flatten" writing "<gemm>/gemm_flat", which the importer folds back.
inline std::string gemmFlattenNode(const std::string& gemm) { return gemm + "/gemm_flatten"; }
inline std::string gemmFlatValue(const std::string& gemm) { return gemm + "/gemm_flat"; }
// A Clip's bounds (opset 11 on: inputs) as two scalar initializers "<clip>/min" and "<clip>/max".
inline std::string clipMinValue(const std::string& clip) { return clip + "/min"; }
inline std::string clipMaxValue(const std::string& clip) { return clip + "/max"; }

// Caps an import checks before it allocates: the file, and the elements of one initializer.
inline constexpr int64_t kMaxFileBytes = int64_t{1} << 30;
inline constexpr int64_t kMaxInitializerElements = int64_t{1} << 28;
// An initializer stripped to its shape (ImportOptions::shapes_only) holds no values: only overflow bounds it.
inline constexpr int64_t kMaxStrippedElements = int64_t{1} << 40;

}  // namespace trainbench::engine::onnx
