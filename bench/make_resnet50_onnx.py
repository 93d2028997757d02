#!/usr/bin/env python3
"""Writes torchvision's ResNet-50 with its weights (random init, about 100 MB) as ONNX, the model of
`trainbench-bench onnx-import` (issue 22: "importing a 100 MB ResNet-50 takes <= 1 s and <= 1.5x the
file size in memory"). Run with Debian's interpreter (python3-torch 1.13, python3-torchvision 0.14):

  /usr/bin/python3 bench/make_resnet50_onnx.py /tmp/resnet50-full.onnx [--distinct-bn]

The export is tests/fixtures/onnx/full/make.py's (eval mode, opset 13, batch dimension "N", batch
norms kept as nodes by TrainingMode.PRESERVE) without the stripping: every initializer keeps its
data. The file is not committed.

With random init every batch norm's weight is ones, its bias, running mean zeros and its running var
ones, and torch's exporter deduplicates the identical tensors (67 initializers, read through 200
Identity nodes). --distinct-bn fills them with random values first, as a trained model's are: 267
initializers, no Identity, the same size within 1 %.
"""
import argparse
import pathlib

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser(description="torchvision's ResNet-50 with its weights as ONNX")
    parser.add_argument("out", help="the .onnx file to write")
    parser.add_argument("--distinct-bn", action="store_true", help="random batch-norm parameters and statistics")
    args = parser.parse_args()
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).eval()
    if args.distinct_bn:
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.normal_(0.0, 0.1)
                    m.running_mean.normal_(0.0, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, x, str(path), opset_version=13, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    params = sum(p.numel() for p in model.parameters())
    print(f"{path}: {path.stat().st_size} bytes, {params} parameters")


if __name__ == "__main__":
    main()
