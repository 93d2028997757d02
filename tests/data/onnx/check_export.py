#!/usr/bin/env python3
"""Checks trainbench's ONNX exports with the onnx package alone (python3-onnx, numpy).

Usage: check_export.py DIR
For every DIR/NAME.onnx (with DIR/NAME.input.bin, NAME.logits.bin: float32 little-endian, the
examples as stored and trainbench's CompiledGraph logits for them):
  * onnx.checker.check_model(full_check=True) and strict shape inference; the output's inferred
    shape is [N, classes] with the batch dimension symbolic "N";
  * opset 13, IR version 8, producer trainbench, the metadata keys, no node with a fused flag;
  * an independent numpy evaluation of the graph (written here from the ONNX operator spec, not from
    trainbench's code) on the examples, after the metadata's input scaling, agrees with the logits
    to 1e-4 of their largest magnitude.
Exit status 0 when every file passes; the failures are printed naming the file.
"""
import json
import pathlib
import sys

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def conv(x, w, b, strides, pads):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - kh) // strides[0] + 1
    ow = (x.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)


def maxpool(x, k, strides, pads):
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=-np.inf)
    oh = (x.shape[2] - k[0]) // strides[0] + 1
    ow = (x.shape[3] - k[1]) // strides[1] + 1
    y = np.full(x.shape[:2] + (oh, ow), -np.inf)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, x[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]])
    return y


def evaluate(model, x):
    g = model.graph
    v = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in g.initializer}
    v[g.input[0].name] = x
    for node in g.node:
        a, i = attrs(node), [v[name] for name in node.input]
        op = node.op_type
        if op == "Conv":
            y = conv(i[0], i[1], i[2] if len(i) > 2 else None, a.get("strides", [1, 1]), a.get("pads", [0] * 4))
        elif op == "Gemm":
            assert a.get("transB") == 1
            y = i[0] @ i[1].T + (i[2] if len(i) > 2 else 0)
        elif op == "BatchNormalization":
            s = lambda t: t.reshape(1, -1, *([1] * (i[0].ndim - 2)))
            y = (i[0] - s(i[3])) / np.sqrt(s(i[4]) + a.get("epsilon", 1e-5)) * s(i[1]) + s(i[2])
        elif op == "Relu":
            y = np.maximum(i[0], 0)
        elif op == "MaxPool":
            y = maxpool(i[0], a["kernel_shape"], a.get("strides", [1, 1]), a.get("pads", [0] * 4))
        elif op == "GlobalAveragePool":
            y = i[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Flatten":
            y = i[0].reshape(i[0].shape[0], -1)
        elif op == "Add":
            y = i[0] + i[1]
        else:
            raise AssertionError(f"unexpected op {op} (node {node.name})")
        v[node.output[0]] = y
    return v[g.output[0].name]


def check(path):
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    out = inferred.graph.output[0].type.tensor_type.shape.dim
    assert out[0].dim_param == "N", f"output batch dimension {out[0]}"
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"
    assert model.ir_version == 8, model.ir_version
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 13)], model.opset_import
    assert model.producer_name == "trainbench"
    meta = {p.key: p.value for p in model.metadata_props}
    for key in ("trainbench.input_scale", "trainbench.input_shift", "trainbench.class_names"):
        assert key in meta, f"metadata {key} missing"
    for node in model.graph.node:
        assert all(a.name != "fused_relu" for a in node.attribute), node.name
    classes = out[1].dim_value
    names = json.loads(meta["trainbench.class_names"])
    assert not names or len(names) == classes, names

    stem = str(path)[:-len(".onnx")]
    pixels = np.fromfile(stem + ".input.bin", dtype="<f4").astype(np.float64)
    want = np.fromfile(stem + ".logits.bin", dtype="<f4").astype(np.float64).reshape(-1, classes)
    sample = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim[1:]]
    x = pixels.reshape([want.shape[0]] + sample)
    x = x * float(meta["trainbench.input_scale"]) + float(meta["trainbench.input_shift"])
    got = evaluate(model, x)
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    assert err <= 1e-4, f"numpy logits differ from trainbench's by {err:.3g} relative"
    return f"{len(model.graph.node)} nodes, {classes} classes, numpy vs trainbench {err:.2g}"


def main():
    files = sorted(pathlib.Path(sys.argv[1]).glob("*.onnx"))
    if not files:
        print(f"no .onnx files in {sys.argv[1]}")
        return 1
    failed = 0
    for f in files:
        try:
            print(f"{f.name}: ok ({check(f)})")
        except Exception as e:  # noqa: BLE001 - every failure is reported with its file
            failed += 1
            print(f"{f.name}: FAILED: {type(e).__name__}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
