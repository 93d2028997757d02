#!/usr/bin/env python3
"""Writes torchvision's ResNet-50 with its weights (random init, about 100 MB) as ONNX, the model of
`trainbench-bench onnx-import` (issue 22: "importing a 100 MB ResNet-50 takes <= 1 s and <= 1.5x the
file size in memory"). Run with Debian's interpreter (python3-torch 1.13, python3-torchvision 0.14):

  /usr/bin/python3 bench/make_resnet50_onnx.py /tmp/resnet50-full.onnx

The export is tests/fixtures/onnx/full/make.py's (eval mode, opset 13, batch dimension "N", batch
norms kept as nodes by TrainingMode.PRESERVE) without the stripping: every initializer keeps its
data. The file is not committed.
"""
import pathlib
import sys

import torch
import torchvision


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_resnet50_onnx.py OUT.onnx")
    path = pathlib.Path(sys.argv[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, x, str(path), opset_version=13, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    params = sum(p.numel() for p in model.parameters())
    print(f"{path}: {path.stat().st_size} bytes, {params} parameters")


if __name__ == "__main__":
    main()
