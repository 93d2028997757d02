#pragma once
// `trainbench-bench encoder`: a BERT-style encoder (tests/fixtures/onnx/encoder.py at vocabulary
// 8000, 128 tokens, 4 layers of 4 heads, hidden 256) exported by PyTorch to ONNX
// (bench/pytorch_encoder.py --export), imported and run by CompiledGraph, against PyTorch running
// the same model (torch.jit.trace + freeze) on the same token ids, side by side in alternating
// rounds at one batch size: examples/s of each and their ratio. The logits of both sides are
// checked to agree first (within 1e-4 of the largest).
#include <string>

namespace trainbench::bench {

struct EncoderBenchOptions {
    int threads = 2;
    int rounds = 5;       // pairs; the medians count
    int batch = 32;
    int calls = 10;       // timed calls per pass; the best of 3 passes counts
    std::string dir;      // holds encoder.onnx and ids.bin; written by the script when missing
    std::string python = "/usr/bin/python3";
};

// 0 when both sides ran and agreed, 1 otherwise.
int encoderBench(const EncoderBenchOptions& options);

}  // namespace trainbench::bench
