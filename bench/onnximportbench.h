#pragma once
// `trainbench-bench onnx-import` (bench/onnximportbench.cpp): reading an ONNX model with its weights,
// engine::onnx::readOnnx against python3-onnx's onnx.load, time and peak memory (issue 22).
#include <string>

namespace trainbench::bench {

struct OnnxImportBenchOptions {
    std::string model;                   // the .onnx file (bench/make_resnet50_onnx.py writes ResNet-50's)
    int repeats = 5;                     // rounds of (trainbench, onnx.load)
    std::string python = "/usr/bin/python3";
    std::string peer;                    // bench/onnx_load_peer.py; empty: no comparator
};

// Each round imports the file once in a forked child of this process (a fresh heap each time, as a
// program that opens a model has) and then runs the peer's onnx.load in its own process. Both sides
// measure the same way: wall time of the call, and peak memory as the growth of the kernel's
// high-water mark of the resident set (VmHWM, reset with /proc/self/clear_refs) over the resident
// set just before the call. Prints medians and minima against the goal (<= 1 s, <= 1.5x the file)
// and one JSON line. Exit 1 when an import fails, 2 for a missing file.
int onnxImportBench(const OnnxImportBenchOptions& options);

}  // namespace trainbench::bench
