#!/usr/bin/python3
"""PyTorch's side of `trainbench-bench encoder` (bench/encoderbench.cpp): inference of a BERT-style
encoder (tests/fixtures/onnx/encoder.py) at a size that runs here — vocabulary 8000, 128 tokens,
4 layers of 4 heads, hidden 256, feed-forward 1024, 2 classes (4.3 M parameters), seeded weights.

  --export DIR   writes DIR/encoder.onnx (torch.onnx.export, opset 17, batch symbolic) and
                 DIR/ids.bin (int32 little-endian, [256, 128] seeded token ids), then exits
  (otherwise)    times fp32 inference on DIR/ids.bin's first --batch sequences in PyTorch's best CPU
                 setup (../shared/benchmarks.md): torch.jit.trace + torch.jit.freeze under
                 torch.inference_mode(), torch.set_num_threads(--threads), one interop thread;
                 --passes timed passes of --calls calls after 3 warm-up calls, the best pass counted.
                 Prints one JSON line: examples_per_second, and the logits of the first 4 sequences
                 (so the caller checks both sides ran the same model).
"""
import argparse
import json
import pathlib
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "onnx"))
from encoder import Encoder  # noqa: E402

SEQ, VOCAB = 128, 8000


def model():
    torch.manual_seed(2022)
    return Encoder(vocab=VOCAB, seq=SEQ, hidden=256, heads=4, layers=4, ffn=1024, classes=2).eval()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--export", action="store_true")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--calls", type=int, default=10)
    a = p.parse_args()
    out = pathlib.Path(a.dir)
    m = model()
    if a.export:
        out.mkdir(parents=True, exist_ok=True)
        g = torch.Generator().manual_seed(7)
        ids = torch.randint(0, VOCAB, (256, SEQ), generator=g)
        ids.numpy().astype("<i4").tofile(out / "ids.bin")
        torch.onnx.export(m, ids[:1], str(out / "encoder.onnx"), opset_version=17, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                          do_constant_folding=True)
        return
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    ids = torch.from_numpy(np.fromfile(out / "ids.bin", dtype="<i4").astype(np.int64).reshape(-1, SEQ))[:a.batch]
    with torch.inference_mode():
        frozen = torch.jit.freeze(torch.jit.trace(m, ids))
        for _ in range(3):
            frozen(ids)
        best = 0.0
        for _ in range(a.passes):
            t0 = time.perf_counter()
            for _ in range(a.calls):
                y = frozen(ids)
            best = max(best, a.calls * a.batch / (time.perf_counter() - t0))
    print(json.dumps({"examples_per_second": best, "logits": y[:4].flatten().tolist(), "torch": torch.__version__,
                      "threads": a.threads, "batch": a.batch}))


if __name__ == "__main__":
    main()
