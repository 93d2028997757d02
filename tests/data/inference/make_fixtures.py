#!/usr/bin/python3
"""Writes the fixtures of tests/engine/test_inferencetorch.cpp with PyTorch (an implementation other
than the engine's own): two models built in torch with fixed seeds, their weights, a batch of
inputs and torch's eval-mode logits.

* w2: the `cnn` preset (W2): conv 3x3 32, ReLU, max pool 2, conv 3x3 64, ReLU, max pool 2, flatten,
  dense 128, ReLU, dense 10, on 1x28x28 pixels.
* convbn: conv 3x3 16 pad 1 (no bias), batch norm, ReLU, a ResNet bottleneck of width 4 and stride 2
  (torchvision's v1.5 block with a projection shortcut), global average pooling, dense 10, on
  1x12x12 pixels, batch norm epsilon 1e-3 (the engine's default) with random running statistics,
  scales and shifts.

Weights are torch's initialisation rounded to multiples of a power of two that fit in int8, so the
file holds them exactly in one byte each (W2's 225,034 weights in 220 KB); inputs are pixels 0..255,
scaled by 1/255 in the model (the graph's metadata input_scale). For each model NAME:
  NAME.bin   the int8 parameters, in the order the engine's model keeps them (per layer: weight,
             bias; batch norm: scale, shift), then the int8 batch norm running statistics (mean,
             variance per layer), then the uint8 pixels of the inputs
  NAME.json  the tensors (name, dims, byte offset, scale: value = int8 * scale), the inputs' offset,
             count and shape, and torch's logits (float32 printed with 9 significant digits)
Run from this folder: /usr/bin/python3 make_fixtures.py"""
import json

import numpy as np
import torch
from torch import nn

BATCH = 4


def quantize(t):
    """t rounded to int8 multiples of a power of two: (int8 values, scale), exactly representable."""
    peak = float(t.abs().max())
    scale = 2.0 ** np.ceil(np.log2(peak / 127.0)) if peak > 0 else 1.0
    q = torch.clamp(torch.round(t / scale), -127, 127)
    return q.to(torch.int8), scale


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride, eps):
        super().__init__()
        self.conv_a = nn.Conv2d(cin, width, 1, bias=False)
        self.bn_a = nn.BatchNorm2d(width, eps=eps)
        self.conv_b = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn_b = nn.BatchNorm2d(width, eps=eps)
        self.conv_c = nn.Conv2d(width, 4 * width, 1, bias=False)
        self.bn_c = nn.BatchNorm2d(4 * width, eps=eps)
        self.conv_shortcut = nn.Conv2d(cin, 4 * width, 1, stride=stride, bias=False)
        self.bn_shortcut = nn.BatchNorm2d(4 * width, eps=eps)

    def forward(self, x):
        y = torch.relu(self.bn_a(self.conv_a(x)))
        y = torch.relu(self.bn_b(self.conv_b(y)))
        y = self.bn_c(self.conv_c(y))
        return torch.relu(y + self.bn_shortcut(self.conv_shortcut(x)))


def w2():
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))


def convbn():
    eps = 1e-3
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16, eps=eps), nn.ReLU(),
                         Bottleneck(16, 4, 2, eps), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


def ordered(model):
    """(params, state): the tensors in the engine's order (modules in forward order; a batch norm's
    weight and bias are its scale and shift; running mean and var are state)."""
    params, state = [], []
    for name, module in model.named_modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            params.append((name + ".weight", module.weight))
            if module.bias is not None:
                params.append((name + ".bias", module.bias))
        elif isinstance(module, nn.BatchNorm2d):
            params += [(name + ".weight", module.weight), (name + ".bias", module.bias)]
            state += [(name + ".running_mean", module.running_mean), (name + ".running_var", module.running_var)]
    return params, state


def write(name, model, shape, seed):
    torch.manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):  # non-trivial statistics, scales and shifts
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    params, state = ordered(model)
    blob, tensors = bytearray(), []
    for group, entries in (("params", params), ("state", state)):
        for tname, t in entries:
            q, scale = quantize(t.detach())
            with torch.no_grad():
                t.copy_(q.to(torch.float32) * scale)  # torch runs on exactly the stored values
            tensors.append({"name": tname, "group": group, "dims": list(t.shape), "offset": len(blob),
                            "scale": scale})
            blob += q.numpy().tobytes()
    pixels = torch.randint(0, 256, (BATCH, *shape), dtype=torch.uint8)
    inputs_offset = len(blob)
    blob += pixels.numpy().tobytes()
    model.eval()
    with torch.no_grad():
        logits = model(pixels.to(torch.float32) * (1.0 / 255.0))
    with open(name + ".bin", "wb") as f:
        f.write(blob)
    manifest = {"model": name, "torch": torch.__version__, "seed": seed, "tensors": tensors,
                "inputs": {"offset": inputs_offset, "count": BATCH, "shape": list(shape), "input_scale": 1.0 / 255.0},
                "logits": [float("%.9g" % v) for v in logits.flatten().tolist()]}
    with open(name + ".json", "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    torch.set_num_threads(1)
    torch.manual_seed(21)
    write("w2", w2(), (1, 28, 28), 21)
    torch.manual_seed(22)
    write("convbn", convbn(), (1, 12, 12), 22)
