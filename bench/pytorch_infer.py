#!/usr/bin/python3
"""PyTorch's side of `trainbench-bench inference` (bench/inferencebench.cpp): fp32 inference of W1 or
W2 with the weights trainbench hands over, in PyTorch's best CPU setup (see ../shared/benchmarks.md):
torch.jit.trace + torch.jit.freeze, and the same followed by torch.jit.optimize_for_inference (its
MKLDNN conversions make W2's batch 256 faster, W1's slower), each figure the better of the two;
channels_last for W2 (model and inputs), torch.set_num_threads, one interop thread, under
torch.inference_mode(). The caller sets OMP_NUM_THREADS and raises
MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ (1 GiB) in its environment.

Measures, on the Fashion-MNIST test images (pixels / 255, fp32, in memory as pytorch_peer.py loads
them):
* batch-1 latency p50 / p99 over --queries single-image calls (50 warm-up calls first), each
  call timed alone with time.perf_counter, the argmax included (as pytorch_peer.py does), and
  batch-1 examples/s = queries / the sum of their times;
* batch-256 examples/s over the 10,000 images (the last batch 16), --passes timed passes after one
  warm-up pass, the best pass counted.
The figures of each setup are in "setups", the setup each best figure came from in "*_setup".
With --int8, also PyTorch's own int8 model ("int8"): eager-mode static post-training quantization
with the fbgemm backend (or, where torch is built without it, as Debian's 1.13 is, "onednn",
PyTorch's other x86 int8 backend) (torch.ao.quantization: QuantStub/DeQuantStub, Conv/Linear + ReLU fused,
get_default_qconfig("fbgemm"): per-channel symmetric weights, histogram-calibrated activations with
reduce_range), calibrated on the first --calibration images of the test set (trainbench's bench
calibrates on the same 256), then trace + freeze, measured the same way.
Prints one JSON line with those figures, the settings, and the logits of the first 8 images (so the
caller can check both sides ran the same weights).

  --weights FILE   float32 little-endian, trainbench's parameter buffer order: per layer weight
                   (Linear [out, in], Conv [out, in, kh, kw]) then bias
"""
import argparse
import copy
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_peer import cpu_model, load_split, make_model  # noqa: E402  (the peer's models and data)


def load_weights(model, path):
    flat = np.fromfile(path, dtype="<f4")
    at = 0
    with torch.no_grad():
        for module in model.modules():
            for p in (getattr(module, "weight", None), getattr(module, "bias", None)):
                if isinstance(module, (torch.nn.Linear, torch.nn.Conv2d)) and p is not None:
                    n = p.numel()
                    if at + n > flat.size:
                        raise SystemExit(f"{path}: {flat.size} floats, the model needs more")
                    p.copy_(torch.from_numpy(flat[at:at + n].copy()).reshape(p.shape))
                    at += n
    if at != flat.size:
        raise SystemExit(f"{path}: {flat.size} floats, the model has {at}")


@torch.inference_mode()
def measure(eager, x_test, args, optimize):
    """Batch-1 latency and batch-256 throughput of one jit setup."""
    model = torch.jit.freeze(torch.jit.trace(eager, x_test[:1]))
    if optimize:
        model = torch.jit.optimize_for_inference(model)
    for i in range(50):
        model(x_test[i:i + 1])
    lat = []
    n = x_test.shape[0]
    for i in range(args.queries):
        xi = x_test[i % n:i % n + 1]
        t0 = time.perf_counter()
        model(xi).argmax(1)
        lat.append(time.perf_counter() - t0)
    batch1 = len(lat) / sum(lat)
    lat.sort()
    for i in range(0, n, 256):  # warm-up pass (the batch-16 tail included)
        model(x_test[i:i + 256])
    rates = []
    for _ in range(args.passes):
        t0 = time.perf_counter()
        for i in range(0, n, 256):
            model(x_test[i:i + 256])
        rates.append(n / (time.perf_counter() - t0))
    return {"latency_ms_p50": lat[len(lat) // 2] * 1e3,
            "latency_ms_p99": lat[min(len(lat) - 1, int(round(0.99 * len(lat))) - 1)] * 1e3,
            "batch1_samples_per_s": batch1, "batch256_samples_per_s": max(rates),
            "logits8": model(x_test[:8]).flatten().tolist()}


def quantized_model(model, workload, x_calib):
    """PyTorch's static int8 of `model` (fbgemm), calibrated on x_calib."""
    import torch.ao.quantization as tq
    # Debian's torch 1.13 is built without fbgemm; "onednn" is PyTorch's other x86 int8 backend.
    engine = "fbgemm" if "fbgemm" in torch.backends.quantized.supported_engines else "onednn"
    torch.backends.quantized.engine = engine
    layers = list(copy.deepcopy(model).to(memory_format=torch.contiguous_format).children())
    q = torch.nn.Sequential(tq.QuantStub(), *layers, tq.DeQuantStub()).eval()
    # Conv/Linear followed by ReLU run as one quantized op, as trainbench fuses them.
    pairs = [[str(i), str(i + 1)] for i in range(1, len(q) - 1)
             if isinstance(q[i], (torch.nn.Conv2d, torch.nn.Linear)) and isinstance(q[i + 1], torch.nn.ReLU)]
    q = tq.fuse_modules(q, pairs)
    q.qconfig = tq.get_default_qconfig(engine)
    tq.prepare(q, inplace=True)
    with torch.inference_mode():
        for i in range(0, x_calib.shape[0], 64):
            q(x_calib[i:i + 64].contiguous())
    tq.convert(q, inplace=True)
    return q, engine


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", choices=("w1", "w2"), required=True)
    p.add_argument("--weights", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--int8", action="store_true", help="also PyTorch's fbgemm static int8 model")
    p.add_argument("--calibration", type=int, default=256, help="int8: calibration images (default 256)")
    p.add_argument("--setup", choices=("best", "freeze", "optimize"), default="best",
                   help="best (default): both setups measured, each figure the better one; freeze: trace + "
                        "freeze; optimize: trace + freeze + optimize_for_inference")
    args = p.parse_args()

    torch.set_num_interop_threads(1)
    torch.set_num_threads(args.threads)
    channels_last = args.workload == "w2"
    model = make_model(args.workload).eval()
    load_weights(model, args.weights)
    x_test, _ = load_split("t10k")
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x_test = x_test.contiguous(memory_format=torch.channels_last)
    setups = {"trace + freeze": False, "trace + freeze + optimize_for_inference": True}
    if args.setup != "best":
        setups = {k: v for k, v in setups.items() if v == (args.setup == "optimize")}
    results = {name: measure(model, x_test, args, optimize) for name, optimize in setups.items()}
    # PyTorch's best setup, figure by figure (which setup gave it is recorded).
    best = {}
    for key, better in (("latency_ms_p50", min), ("latency_ms_p99", min), ("batch1_samples_per_s", max),
                        ("batch256_samples_per_s", max)):
        name = better(results, key=lambda k: results[k][key])
        best[key] = results[name][key]
        best[key.replace("_per_s", "") + "_setup"] = name
    first = next(iter(results.values()))
    if args.int8:
        q, engine = quantized_model(model, args.workload, x_test[:args.calibration])
        xq = x_test.contiguous(memory_format=torch.channels_last) if channels_last else x_test
        best["int8"] = {k: v for k, v in measure(q, xq, args, False).items() if k != "logits8"}
        best["int8"]["setup"] = engine + " static, trace + freeze"
    print(json.dumps({
        "framework": "pytorch", "workload": args.workload, "threads": args.threads, "queries": args.queries,
        **best, "logits8": first["logits8"], "setups": {k: {m: v for m, v in r.items() if m != "logits8"}
                                                         for k, r in results.items()},
        "settings": {"torch": torch.__version__, "cpu": cpu_model(), "num_threads": torch.get_num_threads(),
                     "memory_format": "channels_last" if channels_last else "contiguous",
                     "malloc_env": {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")},
                     "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")}}), flush=True)


if __name__ == "__main__":
    main()
