// `trainbench-cli quantize`: a model as static post-training int8, calibrated on training batches,
// written as an ONNX QDQ file that records its size, its top-1 on the full test set next to fp32's
// and the calibration it used (docs/cli.md, docs/onnx.md).
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/cli/commands.h"
#include "app/cli/texttable.h"
#include "app/inference/quantizemodel.h"
#include "app/run/exitcodes.h"
#include "app/run/versions.h"
#include "engine/graph/graph.h"
#include "engine/onnx/onnxerror.h"
#include "engine/util/errors.h"
#include "profiler/format/numberformat.h"

namespace trainbench::cli {

namespace {

namespace fs = std::filesystem;

// What the command is given before anything slow runs; "" when it is usable.
std::string checkArgs(const QuantizeArgs& a) {
    if (a.batches < 1) return "--calibration-batches must be at least 1, got " + std::to_string(a.batches);
    if (a.batch_size < 1) return "--calibration-batch-size must be at least 1, got " + std::to_string(a.batch_size);
    if (a.method != "minmax" && a.method != "percentile") return "--method '" + a.method + "': expected minmax or percentile";
    if (!(a.percentile > 0.0 && a.percentile <= 100.0)) return "--percentile must be in (0, 100], got " + profiler::shortestNumber(a.percentile);
    return {};
}

// The output's folder exists: found before calibrating rather than after (the write itself still
// reports what else goes wrong).
std::string checkOutput(const std::string& out) {
    const fs::path folder = fs::path(out).parent_path();
    std::error_code ec;
    if (!folder.empty() && !fs::is_directory(folder, ec))
        return "-o " + out + ": cannot write the model there: the folder " + folder.string() + " does not exist";
    if (fs::is_directory(out, ec)) return "-o " + out + ": is a folder; give the model file's path (FILE.onnx)";
    return {};
}

// "4 batches x 64 = 256 training examples (seed 0), minmax; u8 codes 0..127"
std::string calibrationLine(const engine::inference::CalibrationRecord& c) {
    std::string method = c.method;
    if (c.method == "percentile") method += " " + profiler::shortestNumber(c.percentile) + " % of |x|";
    return std::to_string(c.batches) + " batches x " + std::to_string(c.batch_size) + " = " + std::to_string(c.examples) +
           " training examples (seed " + std::to_string(c.seed) + "), " + method + "; u8 codes 0.." +
           std::to_string(c.u8_levels) + ", s8 -127..127";
}

void printTable(const app::QuantizedOutcome& o) {
    const engine::onnx::QuantizationRecord& r = o.record;
    const std::string accuracyHeader = "test top-1 (" + std::to_string(r.test_examples) + " examples)";
    TextTable t({"precision", "weight bytes", "size", accuracyHeader, "delta"});
    const double ratio = double(r.fp32_weight_bytes) / double(std::max<int64_t>(1, r.int8_weight_bytes));
    t.add({"fp32", std::to_string(r.fp32_weight_bytes), "1.00x", profiler::fmtPercent(r.fp32_accuracy.value_or(0.0)), ""});
    const double delta = 100.0 * (r.int8_accuracy.value_or(0.0) - r.fp32_accuracy.value_or(0.0));
    t.add({"int8", std::to_string(r.int8_weight_bytes), fmt("%.2fx smaller", ratio),
           profiler::fmtPercent(r.int8_accuracy.value_or(0.0)), fmt("%+.2f points", delta)});
    t.print(stdout);
}

}  // namespace

int quantizeCommand(const QuantizeArgs& args) {
    if (const std::string bad = checkArgs(args); !bad.empty()) {
        std::fprintf(stderr, "quantize: %s\n", bad.c_str());
        return kExitUsage;
    }
    if (const std::string bad = checkOutput(args.out); !bad.empty()) {
        std::fprintf(stderr, "quantize: %s\n", bad.c_str());
        return kExitIo;
    }
    engine::inference::CalibrationOptions options;
    options.batches = args.batches;
    options.batch_size = args.batch_size;
    options.method = args.method;
    options.percentile = args.percentile;
    options.seed = args.seed;
    app::QuantizedOutcome o;
    std::string description;
    try {
        // MODEL is a run of the store; an fp32 .onnx file opens through openModel too once it
        // accepts one (it then needs data for the calibration and the test set).
        const app::ModelSource model = app::openModel(args.model, args.db);
        description = model.description;
        std::printf("model: %s\n", description.c_str());
        std::fflush(stdout);
        o = app::quantizeModel(model, options, args.threads);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "quantize: %s\n", e.what());
        return kExitUsage;
    } catch (const engine::graph::GraphError& e) {
        std::fprintf(stderr, "quantize: %s: %s\n", args.model.c_str(), e.what());
        return kExitUsage;
    } catch (const std::exception& e) {  // a checkpoint or data that cannot be read
        std::fprintf(stderr, "quantize: %s\n", e.what());
        return kExitRunFailed;
    }
    try {
        engine::onnx::ExportOptions exportOptions;
        exportOptions.producer_version = app::trainbenchVersion();
        engine::onnx::writeQuantizedOnnx(o.quantized, o.record, args.out, exportOptions);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "quantize: %s\n", e.what());
        return kExitIo;
    }
    std::printf("calibration: %s\n", calibrationLine(o.quantized.calibration).c_str());
    std::printf("int8 ran on oneDNN ISA %s\n", o.record.isa.c_str());
    printTable(o);
    std::error_code ec;
    const auto size = fs::file_size(args.out, ec);
    std::printf("wrote %s (ONNX QDQ, opset 13, %s); its metadata holds the calibration, sizes and accuracies\n",
                args.out.c_str(), ec ? "?" : profiler::fmtBytes(double(size)).c_str());
    return kExitOk;
}

}  // namespace trainbench::cli
