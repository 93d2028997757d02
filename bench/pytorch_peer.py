#!/usr/bin/python3
"""PyTorch peer for the trainbench standard workloads (see ../shared/benchmarks.md, beside this repository).

Runs W1 (fmnist-mlp) or W2 (fmnist-cnn) on Fashion-MNIST read straight from Debian's IDX gz
files, with the settings the benchmark rules prescribe, and reports one result (optionally as
a single JSON line on stdout; everything else goes to stderr).

Use Debian's interpreter (/usr/bin/python3, which has python3-torch 1.13). For a fair peer run it
through bench/compare.py, or set the environment yourself:
    OMP_NUM_THREADS=N MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824

Modes
  throughput  train --steps K steps; steps 1..20 are warm-up and are not timed; no evaluation.
              samples_per_s = samples in timed steps / sum of timed step times;
              step_ms_median = median of the timed step times.
  tta         train up to --epochs E; evaluate on the 10,000 test images every --eval-every steps
              (evaluation excluded from the training clock, reported as eval_s); stop at the first
              evaluation with accuracy >= --target unless --full.
  inference   model in eval mode under torch.no_grad(), random (seeded) init unless
              --train-steps > 0: batch-1 latency p50/p99 over --queries test images (after
              warm-up), then batch-256 throughput over the whole test set.
  probe       machine probe: torch.mm 2048x2048 fp32 at --threads, GFLOP/s.
"""

import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn

DATA_DIR = "/usr/share/datasets/fashion-mnist"
BATCH = 128
SKIP_STEPS = 20
DEFAULT_TARGET = {"w1": 0.88, "w2": 0.90}
DEFAULT_STEPS = {"w1": 300, "w2": 150}
WORKLOAD_NAME = {"w1": "fmnist-mlp", "w2": "fmnist-cnn"}
MALLOC_VARS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX",
               "MALLOC_TOP_PAD_", "GLIBC_TUNABLES")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- data

def load_idx(path):
    """Parse a gzipped IDX file (magic 0x0000 08 ndim, big-endian dims, uint8 payload)."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    return data.reshape(dims)


def load_split(prefix):
    x = load_idx(os.path.join(DATA_DIR, f"{prefix}-images-idx3-ubyte.gz"))
    y = load_idx(os.path.join(DATA_DIR, f"{prefix}-labels-idx1-ubyte.gz"))
    # pixels / 255 as float32, NCHW; held in memory as one contiguous tensor.
    xt = torch.from_numpy((x.astype(np.float32) / np.float32(255.0)).reshape(-1, 1, 28, 28))
    yt = torch.from_numpy(y.astype(np.int64))
    return xt.contiguous(), yt


# ----------------------------------------------------------------------------- models

def make_model(workload):
    if workload == "w1":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(784, 512), nn.ReLU(),
            nn.Linear(512, 256), nn.ReLU(),
            nn.Linear(256, 10))
    if workload == "w2":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),     # 28 -> 26 -> 13
            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),    # 13 -> 11 -> 5
            nn.Flatten(),
            nn.Linear(1600, 128), nn.ReLU(),
            nn.Linear(128, 10))
    raise ValueError(workload)


def conv_backends(threads_batch=BATCH):
    """Which convolution backend ATen picks for W2's two convs (training batch and batch 1)."""
    out = {}
    sel = getattr(torch._C, "_select_conv_backend", None)
    if sel is None:
        return "unknown"
    for name, shape_in, shape_w in (("conv1", (1, 28, 28), (32, 1, 3, 3)),
                                    ("conv2", (32, 13, 13), (64, 32, 3, 3))):
        for b in (threads_batch, 1):
            x = torch.empty((b,) + shape_in)
            w = torch.empty(shape_w)
            try:
                be = sel(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
                out[f"{name}_b{b}"] = str(be).split(".")[-1]
            except Exception as e:  # pragma: no cover - private API
                out[f"{name}_b{b}"] = f"error: {e}"
    return out


# ----------------------------------------------------------------------------- settings

def blas_info():
    """BLAS actually mapped into this process, plus the Debian alternative."""
    mapped = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if any(k in p for k in ("blas", "lapack", "libgomp", "libiomp", "dnnl", "mkl")):
                    mapped.add(p)
    except OSError:
        pass
    alt = {}
    for name in ("libblas.so.3-x86_64-linux-gnu", "liblapack.so.3-x86_64-linux-gnu"):
        try:
            alt[name] = os.path.realpath(f"/etc/alternatives/{name}")
        except OSError:
            alt[name] = None
    return {"mapped": sorted(mapped), "alternatives": alt}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def settings(args, extra=None):
    # touch BLAS once so the library is mapped before we look
    a = torch.ones(64, 64)
    (a @ a).sum().item()
    s = {
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "executable": sys.executable,
        "cpu": cpu_model(),
        "num_threads": torch.get_num_threads(),
        "num_interop_threads": torch.get_num_interop_threads(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "malloc_env": {k: os.environ[k] for k in MALLOC_VARS if k in os.environ},
        "blas": blas_info(),
        "mkldnn_enabled": bool(torch.backends.mkldnn.enabled),
        "parallel_backend": "OpenMP" if torch.backends.openmp.is_available() else "other",
        "batch": BATCH,
        "optimizer": "Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-7)",
        "data": f"{DATA_DIR} IDX gz, pixels/255 fp32 in memory, batch by index_select",
        "memory_format": "channels_last" if args.channels_last else "NCHW (contiguous)",
        "flush_denormal": bool(args.flush_denormal),
        "shuffle": f"numpy default_rng(seed={args.seed}).permutation per epoch, last batch partial",
        "seed": args.seed,
        "eval_every": args.eval_every,
        "target": args.target,
    }
    if args.workload == "w2":
        s["conv_backend"] = conv_backends()
    if extra:
        s.update(extra)
    return s


# ----------------------------------------------------------------------------- training

class Trainer:
    def __init__(self, workload, seed, channels_last=False):
        torch.manual_seed(seed)
        self.model = make_model(workload)
        if channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.loss_fn = nn.CrossEntropyLoss()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3, betas=(0.9, 0.999),
                                    eps=1e-7)
        self.rng = np.random.default_rng(seed)

    def epoch_batches(self, n):
        """Index tensors of the batches of one freshly shuffled epoch."""
        perm = torch.from_numpy(self.rng.permutation(n).astype(np.int64))
        return list(torch.split(perm, BATCH))

    def step(self, x_all, y_all, idx):
        x = x_all.index_select(0, idx)
        y = y_all.index_select(0, idx)
        out = self.model(x)
        loss = self.loss_fn(out, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss

    @torch.no_grad()
    def evaluate(self, x_test, y_test, chunk=1000):
        self.model.eval()
        correct = 0
        for i in range(0, x_test.shape[0], chunk):
            pred = self.model(x_test[i:i + chunk]).argmax(1)
            correct += int((pred == y_test[i:i + chunk]).sum())
        self.model.train()
        return correct / x_test.shape[0]


def summarize_steps(step_times, sizes):
    """Throughput over the steps after the warm-up (SKIP_STEPS)."""
    t = step_times[SKIP_STEPS:]
    n = sizes[SKIP_STEPS:]
    if not t:
        return None, None, None
    total = sum(t)
    # secondary figure: median of the rates of consecutive 10-step windows
    win = []
    for i in range(0, len(t) - 9, 10):
        win.append(sum(n[i:i + 10]) / sum(t[i:i + 10]))
    return (sum(n) / total, statistics.median(t) * 1e3,
            statistics.median(win) if win else None)


def run_throughput(args, x_train, y_train):
    tr = Trainer(args.workload, args.seed, args.channels_last)
    n = x_train.shape[0]
    times, sizes = [], []
    batches = []
    step = 0
    while step < args.steps:
        if not batches:
            batches = tr.epoch_batches(n)
        idx = batches.pop(0)
        t0 = time.perf_counter()
        tr.step(x_train, y_train, idx)
        times.append(time.perf_counter() - t0)
        sizes.append(idx.numel())
        step += 1
    sps, med, win = summarize_steps(times, sizes)
    return {"samples_per_s": sps, "step_ms_median": med, "samples_per_s_window_median": win,
            "steps": step, "timed_steps": max(0, step - SKIP_STEPS),
            "train_s": sum(times[SKIP_STEPS:])}


def run_tta(args, x_train, y_train, x_test, y_test):
    tr = Trainer(args.workload, args.seed, args.channels_last)
    n = x_train.shape[0]
    steps_per_epoch = (n + BATCH - 1) // BATCH
    times, sizes = [], []
    train_clock = 0.0
    eval_s = 0.0
    evals = []
    hit = None
    step = 0
    acc = None
    done = False
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        batches = tr.epoch_batches(n)          # shuffling counts as training time
        train_clock += time.perf_counter() - t0
        for idx in batches:
            t0 = time.perf_counter()
            tr.step(x_train, y_train, idx)
            dt = time.perf_counter() - t0
            train_clock += dt
            times.append(dt)
            sizes.append(idx.numel())
            step += 1
            if args.eval_every > 0 and step % args.eval_every == 0:
                e0 = time.perf_counter()
                acc = tr.evaluate(x_test, y_test)
                eval_s += time.perf_counter() - e0
                evals.append((step, round(acc, 4)))
                log(f"step {step:6d} epoch {step / steps_per_epoch:6.2f} "
                    f"train {train_clock:8.2f}s acc {acc:.4f}")
                if hit is None and acc >= args.target:
                    hit = {"tta_s": train_clock, "tta_step": step,
                           "tta_epoch": step / steps_per_epoch}
                    if not args.full:
                        done = True
                        break
        if done:
            break
    if not done:   # final accuracy after the last step (if not just evaluated)
        if not evals or evals[-1][0] != step:
            e0 = time.perf_counter()
            acc = tr.evaluate(x_test, y_test)
            eval_s += time.perf_counter() - e0
            evals.append((step, round(acc, 4)))
    sps, med, _ = summarize_steps(times, sizes)
    res = {"tta_s": None, "tta_step": None, "tta_epoch": None}
    if hit:
        res.update(hit)
    res.update({"final_acc": acc, "eval_s": eval_s, "train_s": train_clock, "steps": step,
                "epochs_run": step / steps_per_epoch, "samples_per_s": sps,
                "step_ms_median": med, "evals": evals})
    return res


# ----------------------------------------------------------------------------- inference

@torch.no_grad()
def run_inference(args, x_train, y_train, x_test, y_test):
    tr = Trainer(args.workload, args.seed, args.channels_last)
    if args.train_steps > 0:
        batches = []
        for _ in range(args.train_steps):
            if not batches:
                batches = tr.epoch_batches(x_train.shape[0])
            with torch.enable_grad():
                tr.step(x_train, y_train, batches.pop(0))
    model = tr.model.eval()
    nq = args.queries
    # batch-1 latency: warm-up, then nq single-image queries (cycling through the test set)
    for i in range(50):
        model(x_test[i:i + 1])
    lat = []
    for i in range(nq):
        j = i % x_test.shape[0]
        xi = x_test[j:j + 1]
        t0 = time.perf_counter()
        model(xi).argmax(1)
        lat.append(time.perf_counter() - t0)
    lat.sort()
    p50 = lat[len(lat) // 2] * 1e3
    p99 = lat[min(len(lat) - 1, int(round(0.99 * len(lat))) - 1)] * 1e3
    # batch-256 throughput over the full test set (one untimed warm-up pass)
    for i in range(0, x_test.shape[0], 256):
        model(x_test[i:i + 256])
    t0 = time.perf_counter()
    correct = 0
    for i in range(0, x_test.shape[0], 256):
        correct += int((model(x_test[i:i + 256]).argmax(1) == y_test[i:i + 256]).sum())
    dt = time.perf_counter() - t0
    return {"latency_ms_p50": p50, "latency_ms_p99": p99, "queries": nq,
            "batch256_samples_per_s": x_test.shape[0] / dt,
            "weights": f"trained {args.train_steps} steps" if args.train_steps > 0
            else "random init (seeded)",
            "acc_of_weights": correct / x_test.shape[0]}


# ----------------------------------------------------------------------------- probe

def run_probe(args):
    n = 2048
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    c = torch.empty(n, n)
    torch.mm(a, b, out=c)                       # warm-up
    rates = []
    for _ in range(args.probe_reps):
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        rates.append(2 * n ** 3 / (time.perf_counter() - t0) / 1e9)
    return {"gflops_median": statistics.median(rates), "gflops_max": max(rates),
            "gflops_min": min(rates), "reps": args.probe_reps, "n": n}


# ----------------------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", choices=("w1", "w2"), default="w1")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--mode", choices=("throughput", "tta", "inference", "probe"),
                   default="throughput")
    p.add_argument("--epochs", type=int, default=15, help="tta: max epochs (default 15)")
    p.add_argument("--target", type=float, default=None,
                   help="tta: accuracy target (default 0.88 for w1, 0.90 for w2)")
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--seed", type=int, default=42,
                   help="init + shuffle seed (default 42, as in experiments/*.json)")
    p.add_argument("--steps", type=int, default=None,
                   help="throughput: steps incl. 20 warm-up (default 300 w1, 150 w2)")
    p.add_argument("--full", action="store_true", help="tta: keep training to --epochs")
    p.add_argument("--queries", type=int, default=2000, help="inference: batch-1 queries")
    p.add_argument("--train-steps", type=int, default=0,
                   help="inference: train this many steps before measuring (default 0)")
    p.add_argument("--probe-reps", type=int, default=4)
    p.add_argument("--channels-last", action="store_true",
                   help="w2: model and data in channels_last memory format (default: NCHW)")
    p.add_argument("--flush-denormal", action="store_true",
                   help="torch.set_flush_denormal(True): denormals flushed to zero, as trainbench does")
    p.add_argument("--json", action="store_true", help="print one JSON line on stdout")
    args = p.parse_args()
    if args.target is None:
        args.target = DEFAULT_TARGET[args.workload]
    if args.steps is None:
        args.steps = DEFAULT_STEPS[args.workload]

    # Debian's torch starts at 1 thread: set both pools explicitly (interop first).
    torch.set_num_interop_threads(1)
    torch.set_num_threads(args.threads)
    if args.flush_denormal:
        torch.set_flush_denormal(True)
    if os.environ.get("OMP_NUM_THREADS") not in (None, str(args.threads)):
        log(f"warning: OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} != --threads "
            f"{args.threads}")
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        log("note: MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_ not set; the benchmark "
            "rules raise them to 1 GiB for the peer (bench/compare.py does)")

    result = {"framework": "pytorch", "workload": args.workload,
              "workload_name": WORKLOAD_NAME[args.workload], "threads": args.threads,
              "mode": args.mode, "samples_per_s": None, "step_ms_median": None,
              "tta_s": None, "tta_step": None, "tta_epoch": None, "final_acc": None,
              "eval_s": None}

    if args.mode == "probe":
        result.update(run_probe(args))
        result["settings"] = {"torch": torch.__version__, "num_threads": torch.get_num_threads(),
                              "blas": blas_info()["mapped"]}
    else:
        t0 = time.perf_counter()
        x_train, y_train = load_split("train")
        x_test, y_test = load_split("t10k")
        if args.channels_last:
            x_train = x_train.contiguous(memory_format=torch.channels_last)
            x_test = x_test.contiguous(memory_format=torch.channels_last)
        log(f"data loaded in {time.perf_counter() - t0:.2f}s: train {tuple(x_train.shape)} "
            f"test {tuple(x_test.shape)}")
        if args.mode == "throughput":
            result.update(run_throughput(args, x_train, y_train))
        elif args.mode == "tta":
            result.update(run_tta(args, x_train, y_train, x_test, y_test))
        else:
            result.update(run_inference(args, x_train, y_train, x_test, y_test))
        result["settings"] = settings(args)

    if args.json:
        print(json.dumps(result), flush=True)
    else:
        for k, v in result.items():
            if k not in ("settings", "evals"):
                log(f"{k:>28}: {v}")
        log(json.dumps(result["settings"], indent=1))


if __name__ == "__main__":
    main()
