#!/usr/bin/env python3
"""Writes W1 (fmnist-mlp) and W2 (fmnist-cnn) as PyTorch exports them to ONNX, with PyTorch's own
initialisation (seeded), for `trainbench-bench imported-model` (Debian's /usr/bin/python3 has
python3-torch).

Usage: export_workloads_onnx.py DIR   -> DIR/w1.onnx, DIR/w2.onnx
"""
import pathlib
import sys

import torch
from torch import nn


def w1():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def w2():
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(42)
    for name, model in (("w1", w1()), ("w2", w2())):
        model.eval()
        x = torch.randn(1, 1, 28, 28)
        path = out / f"{name}.onnx"
        torch.onnx.export(model, x, str(path), opset_version=13, input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
        print(path)


if __name__ == "__main__":
    main()
