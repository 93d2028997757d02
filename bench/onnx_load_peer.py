#!/usr/bin/env python3
"""The comparator of `trainbench-bench onnx-import`: one onnx.load(PATH) (Debian's python3-onnx, C++
protobuf) timed and its peak memory measured the way the benchmark measures trainbench's import.

Usage: /usr/bin/python3 bench/onnx_load_peer.py PATH   ->  one JSON line

Memory: after `import onnx`, the kernel's high-water mark of the resident set is reset to the current
resident set (writing "5" to /proc/self/clear_refs); peak_extra_bytes = VmHWM after the load - VmRSS
before it; kept_extra_bytes = VmRSS after it, with the model still held, - VmRSS before.
"""
import json
import sys
import time

import onnx


def status_bytes(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key + " missing from /proc/self/status")


def main():
    path = sys.argv[1]
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = status_bytes("VmRSS")
    t0 = time.perf_counter()
    model = onnx.load(path)
    seconds = time.perf_counter() - t0
    peak = status_bytes("VmHWM")
    kept = status_bytes("VmRSS")
    print(json.dumps({"seconds": seconds, "peak_extra_bytes": peak - before, "kept_extra_bytes": kept - before,
                      "initializers": len(model.graph.initializer), "onnx": onnx.__version__}))


if __name__ == "__main__":
    main()
