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
A quantized model (metadata trainbench.precision = int8, docs/onnx.md "The quantized model") is
checked the same way, and besides: every Conv and Gemm weight is an int8 initializer dequantized per
output channel (axis 0, zero points 0), every QuantizeLinear is followed by its DequantizeLinear, the
calibration, size and accuracy keys are there; its logits are Int8CompiledGraph's, against which the
numpy evaluation of the QDQ graph (QuantizeLinear rounds half to even and saturates, as the spec
says) agrees to 5e-2 of their largest magnitude. Measured: 1-2e-2 for W1, W2 and resnet_small after
two training steps (logits near 1), as far as Int8CompiledGraph is from its own dequantized graph
run without any activation rounding: oneDNN's int8 kernels do not compute exactly the spec's
float64 QDQ arithmetic. A wrong scale, axis or u8/s8 type is off by far more.
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


def per_axis(t, axis, ndim):
    """A scale or zero point, per tensor (scalar) or per axis, shaped to broadcast."""
    if t.ndim == 0:
        return t
    shape = [1] * ndim
    shape[axis] = -1
    return t.reshape(shape)


def quantize_linear(x, scale, zero, axis):
    zero = np.zeros((), dtype=np.uint8) if zero is None else zero
    info = np.iinfo(zero.dtype)
    y = np.rint(x / per_axis(scale, axis, x.ndim)) + per_axis(zero.astype(np.float64), axis, x.ndim)
    return np.clip(y, info.min, info.max).astype(zero.dtype)


def dequantize_linear(x, scale, zero, axis):
    zero = np.zeros((), dtype=x.dtype) if zero is None else zero
    return (x.astype(np.float64) - per_axis(zero.astype(np.float64), axis, x.ndim)) * per_axis(scale, axis, x.ndim)


def evaluate(model, x):
    g = model.graph
    v = {}
    for t in g.initializer:
        a = numpy_helper.to_array(t)
        v[t.name] = a.astype(np.float64) if a.dtype.kind == "f" else a  # int8 / uint8 codes keep their type
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
        elif op == "QuantizeLinear":
            y = quantize_linear(i[0], i[1], i[2] if len(i) > 2 else None, a.get("axis", 1))
        elif op == "DequantizeLinear":
            y = dequantize_linear(i[0], i[1], i[2] if len(i) > 2 else None, a.get("axis", 1))
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
    int8 = meta.get("trainbench.precision") == "int8"
    if int8:
        check_qdq(model, meta)

    stem = str(path)[:-len(".onnx")]
    pixels = np.fromfile(stem + ".input.bin", dtype="<f4").astype(np.float64)
    want = np.fromfile(stem + ".logits.bin", dtype="<f4").astype(np.float64).reshape(-1, classes)
    sample = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim[1:]]
    x = pixels.reshape([want.shape[0]] + sample)
    x = x * float(meta["trainbench.input_scale"]) + float(meta["trainbench.input_shift"])
    got = evaluate(model, x)
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    tolerance = 5e-2 if int8 else 1e-4
    assert err <= tolerance, f"numpy logits differ from trainbench's by {err:.3g} relative"
    kind = "int8 QDQ" if int8 else "fp32"
    return f"{kind}, {len(model.graph.node)} nodes, {classes} classes, numpy vs trainbench {err:.2g}"


def check_qdq(model, meta):
    """The QDQ form of docs/onnx.md: int8 weights per output channel, activation pairs, the record."""
    for key in ("calibration.batches", "calibration.batch_size", "calibration.examples", "calibration.method",
                "calibration.percentile", "calibration.seed", "calibration.u8_levels", "int8_weight_bytes",
                "fp32_weight_bytes"):
        assert "trainbench." + key in meta, f"metadata trainbench.{key} missing"
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    writer = {n.output[0]: n for n in model.graph.node}
    readers = {}
    for n in model.graph.node:
        for name in n.input:
            readers.setdefault(name, []).append(n)
    for n in model.graph.node:
        if n.op_type in ("Conv", "Gemm"):
            dq = writer.get(n.input[1])
            assert dq is not None and dq.op_type == "DequantizeLinear", f"{n.name}: weight {n.input[1]} is not dequantized"
            codes, scale, zero = (init[name] for name in dq.input)
            assert codes.dtype == np.int8 and zero.dtype == np.int8 and not zero.any(), f"{dq.name}: not symmetric int8"
            assert attrs(dq).get("axis") == 0 and scale.shape == (codes.shape[0],), f"{dq.name}: not per output channel"
        if n.op_type == "QuantizeLinear":
            following = readers.get(n.output[0], [])
            assert [r.op_type for r in following] == ["DequantizeLinear"], f"{n.name}: not followed by its DequantizeLinear"
            zero = init[n.input[2]]
            assert zero.shape == () and zero == 0 and zero.dtype in (np.uint8, np.int8), f"{n.name}: zero point {zero!r}"
            assert list(following[0].input[1:]) == list(n.input[1:]), f"{n.name}: pair of different scales"


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
