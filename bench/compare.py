#!/usr/bin/python3
"""Side-by-side benchmark: trainbench vs the PyTorch peer (see ../shared/benchmarks.md, beside this repository).

For each workload (w1, w2) and thread count (1, 2) it runs a large-matmul probe and then the pair
A = trainbench, B = PyTorch, repeated R times (A, B, A, B, ...), in throughput mode and, with
--tta, in time-to-accuracy mode. It prints a table with medians, [min-max] and the ratio
trainbench / PyTorch, and can write JSON (--out) and a Markdown table (--markdown).

Run with Debian's interpreter (it has torch):  /usr/bin/python3 bench/compare.py --help
"""

import argparse
import datetime
import json
import os
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PEER = os.path.join(HERE, "pytorch_peer.py")
PEER_PYTHON = "/usr/bin/python3"          # Debian's python: the one with python3-torch
GIB = "1073741824"

EXPERIMENT = {"w1": "experiments/fmnist-mlp.json", "w2": "experiments/fmnist-cnn.json"}
TARGET = {"w1": 0.88, "w2": 0.90}
STEPS = {"w1": 300, "w2": 150}

# metric -> (label, higher_is_better)
METRICS = {
    "samples_per_s": ("throughput samples/s", True),
    "step_ms_median": ("step ms (median)", False),
    "tta_s": ("time-to-acc s", False),
    "tta_step": ("step at target", False),
    "final_acc": ("final test acc", True),
    "eval_s": ("eval s (excluded)", False),
    "latency_ms_p50": ("b1 latency p50 ms", False),
    "latency_ms_p99": ("b1 latency p99 ms", False),
    "batch256_samples_per_s": ("b256 infer samples/s", True),
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ============================================================================ trainbench contract
# Everything that knows about the trainbench CLI and its run store is in these two functions;
# adjust them when the CLI changes.

def trainbench_run(cli, workload, threads, mode, steps, epochs, seed=42):
    """Run trainbench once; return a dict with the same keys the peer reports.

    mode 'throughput': max_steps=steps, no evaluation; reads runs.throughput (samples/s, first
    20 steps skipped by the engine) and the median of steps.step_seconds for step > 20.
    mode 'tta': evaluate every 100 steps, stop at target; reads time_to_target, step_at_target,
    final_accuracy, eval_seconds.
    """
    with tempfile.TemporaryDirectory(prefix="tb-bench-") as tmp:
        db = os.path.join(tmp, "runs.db")
        cmd = [cli, "run", EXPERIMENT[workload], "--db", db, "--quiet",
               "--set", f"train.threads={threads}", "--set", f"seed={seed}"]
        if mode == "throughput":
            cmd += ["--set", f"train.max_steps={steps}", "--set", "train.epochs=0",
                    "--set", "train.eval_every_steps=0",
                    "--set", "train.eval_at_epoch_end=false"]
        elif mode == "tta":
            cmd += ["--set", "train.eval_every_steps=100",
                    "--set", f"train.target_accuracy={TARGET[workload]:.2f}",
                    "--set", "train.stop_at_target=true",
                    "--set", f"train.epochs={epochs}"]
        else:
            raise ValueError(f"no trainbench contract for mode {mode!r} yet")
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"trainbench failed ({proc.returncode}): {shlex.join(cmd)}\n"
                               f"{proc.stderr[-2000:]}")
        con = sqlite3.connect(db)
        try:
            res = {"framework": "trainbench", "workload": workload, "threads": threads,
                   "mode": mode, "command": shlex.join(cmd)}
            status, stop_reason = con.execute(
                "SELECT status, stop_reason FROM runs ORDER BY id DESC LIMIT 1").fetchone()
            res.update({"status": status, "stop_reason": stop_reason})
            if status != "completed":
                log(f"warning: trainbench run status {status!r} ({stop_reason}): "
                    f"{shlex.join(cmd)}")
            if mode == "throughput":
                run_id, tput, train_s, nsteps = con.execute(
                    "SELECT id, throughput, train_seconds, steps FROM runs "
                    "ORDER BY id DESC LIMIT 1").fetchone()
                st = [r[0] for r in con.execute(
                    "SELECT step_seconds FROM steps WHERE run_id=? AND step>20", (run_id,))]
                res.update({"samples_per_s": tput, "train_s": train_s, "steps": nsteps,
                            "step_ms_median": statistics.median(st) * 1e3 if st else None})
            else:
                tta_s, tta_step, acc, eval_s = con.execute(
                    "SELECT time_to_target, step_at_target, final_accuracy, eval_seconds "
                    "FROM runs ORDER BY id DESC LIMIT 1").fetchone()
                res.update({"tta_s": tta_s, "tta_step": tta_step, "final_acc": acc,
                            "eval_s": eval_s})
        finally:
            con.close()
        return res


# ============================================================================ PyTorch peer

PEER_EXTRA_ENV = {}      # from --peer-env KEY=VALUE (experiments only; recorded in the results)


def peer_env(threads):
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": str(threads),
                "MALLOC_MMAP_THRESHOLD_": GIB,
                "MALLOC_TRIM_THRESHOLD_": GIB})
    env.update(PEER_EXTRA_ENV)
    return env


# The peer's best setup, per workload (measured here, 2 threads, side by side): channels_last makes
# PyTorch's CNN 25-35 % faster (its oneDNN convolutions then skip NCHW<->blocked reorders);
# flush-denormal is what trainbench does and costs PyTorch nothing.
PEER_BEST = {"w1": ["--flush-denormal"], "w2": ["--channels-last", "--flush-denormal"]}


def peer_run(workload, threads, mode, steps=None, epochs=None, extra=(), seed=42):
    cmd = [PEER_PYTHON, PEER, "--workload", workload, "--threads", str(threads),
           "--mode", mode, "--json", "--seed", str(seed)]
    if mode == "throughput" and steps:
        cmd += ["--steps", str(steps)]
    if mode == "tta":
        cmd += ["--epochs", str(epochs), "--target", f"{TARGET[workload]:.2f}",
                "--eval-every", "100"]
    cmd += list(extra)
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=peer_env(threads))
    if proc.returncode != 0:
        raise RuntimeError(f"peer failed ({proc.returncode}): {shlex.join(cmd)}\n"
                           f"{proc.stderr[-2000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["command"] = " ".join(f"{k}={v}" for k, v in
                              {"OMP_NUM_THREADS": threads, "MALLOC_MMAP_THRESHOLD_": GIB,
                               "MALLOC_TRIM_THRESHOLD_": GIB, **PEER_EXTRA_ENV}.items()) \
        + " " + shlex.join(cmd)
    return res


def _cpu_snapshot():
    """(wall, busy CPU-seconds of the whole machine, CPU-seconds of our finished children)."""
    import resource
    import time
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    busy = (sum(v[:8]) - v[3] - v[4]) / hz
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic(), busy, ru.ru_utime + ru.ru_stime


def run_measured(fn, *a, **kw):
    """Run fn (which runs one child process) and add 'others_busy_during': CPUs used by
    processes other than that child, averaged over its wall time."""
    try:
        w0, b0, c0 = _cpu_snapshot()
    except OSError:
        return fn(*a, **kw)
    res = fn(*a, **kw)
    w1, b1, c1 = _cpu_snapshot()
    res["others_busy_during"] = max(0.0, ((b1 - b0) - (c1 - c0)) / max(1e-9, w1 - w0))
    return res


def others_busy(seconds=0.5):
    """CPUs kept busy by other processes: sampled from /proc/stat while we run nothing."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + v[4]                      # idle + iowait
        return sum(v[:8]), idle                 # exclude guest fields (already in user)
    try:
        import time
        t0, i0 = snap()
        time.sleep(seconds)
        t1, i1 = snap()
        return (1 - (i1 - i0) / max(1, t1 - t0)) * (os.cpu_count() or 1)
    except OSError:
        return None


def max_busy(g):
    v = [x for x in g.get("busy", []) if x is not None]
    return max(v) if v else float("nan")


def probe(threads):
    r = peer_run("w1", threads, "probe")
    return r["gflops_median"]


# ============================================================================ statistics / output

def spread(vals):
    v = [x for x in vals if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v),
            "values": vals}


def fmt(x, metric=None):
    if x is None:
        return "—"
    if metric in ("final_acc",):
        return f"{x:.4f}"
    if metric in ("tta_step",):
        return f"{x:.0f}"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_spread(s, metric):
    if not s:
        return "—"
    return f"{fmt(s['median'], metric)} [{fmt(s['min'], metric)}–{fmt(s['max'], metric)}]"


def summarize(group):
    """group: dict with 'pairs' (list of {'tb':..,'pt':..}) and 'probes'. Adds per-metric rows."""
    rows = []
    metrics = [m for m in METRICS if any((p.get("pt") or {}).get(m) is not None or
                                         (p.get("tb") or {}).get(m) is not None
                                         for p in group["pairs"])]
    for m in metrics:
        tb = [(p.get("tb") or {}).get(m) for p in group["pairs"]]
        pt = [(p.get("pt") or {}).get(m) for p in group["pairs"]]
        ratios = [a / b for a, b in zip(tb, pt) if a is not None and b]
        stb, spt = spread(tb), spread(pt)
        rows.append({
            "metric": m, "label": METRICS[m][0], "higher_is_better": METRICS[m][1],
            "trainbench": stb, "pytorch": spt,
            # headline ratio: median of the per-pair ratios (robust to drift between pairs)
            "ratio": spread(ratios),
            "ratio_of_medians": (stb["median"] / spt["median"]
                                 if stb and spt and spt["median"] else None),
        })
    group["rows"] = rows
    return rows


def ratio_note(row):
    if row["metric"] in ("samples_per_s", "batch256_samples_per_s"):
        return ">1 = trainbench faster"
    if row["metric"] in ("step_ms_median", "tta_s", "latency_ms_p50", "latency_ms_p99"):
        return "<1 = trainbench faster"
    return ""


def table_text(groups):
    hdr = ["workload", "thr", "mode", "metric", "trainbench med [min–max]",
           "pytorch med [min–max]", "tb/pt", "probe GFLOP/s", "others busy CPUs max"]
    lines = []
    for g in groups:
        pr = spread(g["probes"])
        for r in g["rows"]:
            ratio = (f"{r['ratio']['median']:.2f} [{r['ratio']['min']:.2f}–{r['ratio']['max']:.2f}]"
                     if r["ratio"] else "—")
            lines.append([g["workload"], str(g["threads"]), g["mode"], r["label"],
                          fmt_spread(r["trainbench"], r["metric"]),
                          fmt_spread(r["pytorch"], r["metric"]), ratio,
                          fmt_spread(pr, None), f"{max_busy(g):.1f}"])
    w = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(hdr)]
    out = ["  ".join(h.ljust(w[i]) for i, h in enumerate(hdr)),
           "  ".join("-" * w[i] for i in range(len(hdr)))]
    out += ["  ".join(c.ljust(w[i]) for i, c in enumerate(l)) for l in lines]
    return "\n".join(out)


def table_markdown(groups, meta):
    out = [f"Measured {meta['date']} on commit `{meta['commit']}`, {meta['cpu']}; "
           f"command: `{meta['command']}`; {meta['repeats']} alternating pairs per row "
           "(trainbench, PyTorch, …); medians with [min–max]; ratio = median of the per-pair "
           "ratios trainbench/PyTorch (throughput: >1 is trainbench faster; times: <1 is "
           "trainbench faster). Probe = torch.mm 2048² fp32 GFLOP/s before each pair.",
           "",
           f"PyTorch peer: {meta['peer_settings']}",
           "",
           "| workload | threads | metric | trainbench | PyTorch | trainbench / PyTorch | probe GFLOP/s | others busy (CPUs, max) |",
           "|---|---:|---|---:|---:|---:|---:|---:|"]
    for g in groups:
        pr = spread(g["probes"])
        for r in g["rows"]:
            ratio = (f"{r['ratio']['median']:.2f} [{r['ratio']['min']:.2f}–{r['ratio']['max']:.2f}]"
                     if r["ratio"] else "—")
            out.append(f"| {g['workload']} {'fmnist-mlp' if g['workload'] == 'w1' else 'fmnist-cnn'}"
                       f" ({g['mode']}) | {g['threads']} | {r['label']} | "
                       f"{fmt_spread(r['trainbench'], r['metric'])} | "
                       f"{fmt_spread(r['pytorch'], r['metric'])} | {ratio} | "
                       f"{fmt_spread(pr, None)} | {max_busy(g):.1f} |")
    return "\n".join(out) + "\n"


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "uncommitted"


# ============================================================================ main

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="w1,w2", help="comma list (default w1,w2)")
    ap.add_argument("--threads", default="1,2", help="comma list (default 1,2)")
    ap.add_argument("--repeats", "-R", type=int, default=3, help="pairs per cell (default 3)")
    ap.add_argument("--steps-w1", type=int, default=STEPS["w1"])
    ap.add_argument("--steps-w2", type=int, default=STEPS["w2"])
    ap.add_argument("--no-throughput", action="store_true", help="skip throughput mode")
    ap.add_argument("--tta", action="store_true", help="also run time-to-accuracy")
    ap.add_argument("--epochs", type=int, default=15, help="tta: max epochs (default 15)")
    ap.add_argument("--inference", action="store_true",
                    help="also run inference (PyTorch only: no trainbench contract yet)")
    ap.add_argument("--cli", default="build/release/app/trainbench-cli",
                    help="trainbench CLI (relative to the repo root)")
    ap.add_argument("--peer-only", action="store_true", help="run only the PyTorch side")
    ap.add_argument("--peer-arg", action="append", default=[],
                    help="extra argument for pytorch_peer.py (repeatable), e.g. --channels-last")
    ap.add_argument("--peer-env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for the peer (repeatable), e.g. OMP_WAIT_POLICY=PASSIVE")
    ap.add_argument("--peer-plain", action="store_true",
                    help="run the peer without its best per-workload settings (PEER_BEST)")
    ap.add_argument("--out", help="write all results as JSON here")
    ap.add_argument("--markdown", help="write a Markdown table for docs/performance.md here")
    args = ap.parse_args()

    for kv in args.peer_env:
        k, _, v = kv.partition("=")
        PEER_EXTRA_ENV[k] = v
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    threads = [int(t) for t in args.threads.split(",") if t.strip()]
    steps = {"w1": args.steps_w1, "w2": args.steps_w2}
    cli = args.cli if os.path.isabs(args.cli) else os.path.join(REPO, args.cli)
    if not args.peer_only:
        if not (os.path.isfile(cli) and os.access(cli, os.X_OK)):
            log(f"error: trainbench CLI not found or not executable: {cli}\n"
                "       build it (cmake --preset release && cmake --build build/release) or "
                "pass --cli PATH; use --peer-only to run the PyTorch side alone.")
            return 2
        for w in workloads:
            if not os.path.isfile(os.path.join(REPO, EXPERIMENT[w])):
                log(f"error: experiment file missing: {EXPERIMENT[w]}")
                return 2

    modes = ([] if args.no_throughput else ["throughput"]) + (["tta"] if args.tta else []) \
        + (["inference"] if args.inference else [])
    groups = []
    for w in workloads:
        for t in threads:
            for mode in modes:
                g = {"workload": w, "threads": t, "mode": mode, "pairs": [], "probes": [],
                     "busy": []}
                for r in range(args.repeats):
                    busy = others_busy()
                    gf = probe(t)
                    g["probes"].append(gf)
                    g["busy"].append(busy)
                    pair = {"probe_gflops": gf, "others_busy_cpus": busy, "tb": None, "pt": None}
                    # Time to accuracy depends on the data order and the initial weights: each
                    # pair uses its own seed (the same on both sides), so medians span seeds.
                    seed = 42 + r
                    if not args.peer_only and mode != "inference":
                        pair["tb"] = run_measured(trainbench_run, cli, w, t, mode, steps[w],
                                                  args.epochs, seed)
                    peer_args = ([] if args.peer_plain else PEER_BEST.get(w, [])) + args.peer_arg
                    pair["pt"] = run_measured(peer_run, w, t, mode, steps[w], args.epochs,
                                              peer_args, seed)
                    for side in ("tb", "pt"):
                        if pair[side] and pair[side].get("others_busy_during") is not None:
                            g["busy"].append(pair[side]["others_busy_during"])
                    g["pairs"].append(pair)
                    tb, pt = pair["tb"] or {}, pair["pt"]
                    key = {"throughput": "samples_per_s", "tta": "tta_s",
                           "inference": "latency_ms_p50"}[mode]
                    during = [x.get("others_busy_during") for x in (tb, pt) if x]
                    during = max([d for d in during if d is not None], default=0.0)
                    log(f"{w} thr={t} {mode:10s} rep {r + 1}/{args.repeats}: others busy "
                        f"{busy or 0:3.1f} before, {during:3.1f} during (CPUs); "
                        f"probe {gf:6.1f} GFLOP/s | trainbench {fmt(tb.get(key))} | pytorch {fmt(pt.get(key))}"
                        + (f" (step {pt.get('tta_step')}, acc {pt.get('final_acc')})"
                           if mode == "tta" else ""))
                summarize(g)
                groups.append(g)

    peer_settings, conv = None, None
    for g in groups:
        for p in g["pairs"]:
            s = (p["pt"] or {}).get("settings") or {}
            if s.get("blas") and peer_settings is None:
                peer_settings = s
            if s.get("conv_backend") and conv is None:
                conv = s["conv_backend"]
    ps = peer_settings or {}
    blas = [os.path.basename(x) for x in ps.get("blas", {}).get("mapped", [])]
    peer_desc = (f"torch {ps.get('torch')}, BLAS {ps.get('blas', {}).get('alternatives', {}).get('libblas.so.3-x86_64-linux-gnu')}"
                 f" (mapped: {', '.join(blas)}), set_num_threads=N, interop 1, OMP_NUM_THREADS=N, "
                 f"MALLOC_MMAP_THRESHOLD_=MALLOC_TRIM_THRESHOLD_={GIB}, "
                 + "".join(f"{k}={v}, " for k, v in PEER_EXTRA_ENV.items()) +
                 f"{ps.get('optimizer')}, batch 128, conv backend {conv or 'n/a'}; per workload: "
                 + "; ".join(f"{w} {' '.join(a) or '(defaults)'}"
                             for w, a in ({} if args.peer_plain else PEER_BEST).items())
                 + (f"; extra {' '.join(args.peer_arg)}" if args.peer_arg else ""))
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "commit": git_commit(), "cpu": ps.get("cpu", "?"),
            "command": "/usr/bin/python3 bench/compare.py " + shlex.join(sys.argv[1:]),
            "repeats": args.repeats, "peer_settings": peer_desc,
            "trainbench_settings": None if args.peer_only else
            f"{args.cli}, --set train.threads=N, environment inherited (no MALLOC_ tunables added)"}

    print(f"# {meta['date']}  commit {meta['commit']}  {meta['cpu']}")
    print(f"# pytorch: {peer_desc}")
    if meta["trainbench_settings"]:
        print(f"# trainbench: {meta['trainbench_settings']}")
    print("# ratio = median of per-pair trainbench/pytorch [min–max]; throughput: >1 trainbench "
          "faster; times (step ms, tta s, latency): <1 trainbench faster")
    print(table_text(groups))
    ncpu = os.cpu_count() or 1
    busy = [g for g in groups if max_busy(g) > 0.3]
    if busy:
        print(f"# WARNING: other processes kept > 0.3 of {ncpu} CPUs busy in "
              f"{len(busy)} row group(s) (from /proc/stat minus our own child's CPU time, "
              "before and during each run); "
              "figures are unreliable, multi-threaded ones especially (OpenMP barriers stall "
              "when a thread is descheduled). Rerun when the machine is idle.")

    if args.out:
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "groups": groups}, f, indent=1)
        log(f"wrote {args.out}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table_markdown(groups, meta))
        log(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
