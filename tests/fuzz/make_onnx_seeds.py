#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_onnximport into tests/data/fuzz/fuzz_onnximport/: small models of
every op the importer takes, in trainbench's export conventions (fused ReLUs as "<node>/fused_relu",
the metadata keys) and another exporter's (initializers among the inputs, float_data), plus a
refused op and a truncated file. Needs the onnx package (Debian: python3-onnx; /usr/bin/python3).
Deterministic; rerun after changing it and commit the files. Two more seeds are PyTorch's exports,
copied from tests/fixtures/onnx/ (make.py there): mobilenet_block_op10.onnx (depthwise Conv, Clip
with attribute bounds, Add) and grouped_conv.onnx (a group-2 Conv, Gemm)."""
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "fuzz", "fuzz_onnximport")
rng = np.random.default_rng(21)


def init(name, *dims, raw=True):
    a = rng.standard_normal(dims).astype(np.float32)
    if raw:
        return numpy_helper.from_array(a, name)
    return helper.make_tensor(name, TensorProto.FLOAT, dims, a.flatten().tolist())


def value(name, *dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def model(nodes, inits, inputs, output, meta=None, opset=13):
    g = helper.make_graph(nodes, "seed", inputs, [output], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="trainbench")
    m.ir_version = 8
    for k, v in (meta or {}).items():
        m.metadata_props.append(onnx.StringStringEntryProto(key=k, value=v))
    return m.SerializeToString()


def small_cnn():
    n = helper.make_node
    nodes = [
        n("Conv", ["input", "conv_0.weight", "conv_0.bias"], ["conv_0/pre_relu"], "conv_0",
          kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
        n("Relu", ["conv_0/pre_relu"], ["conv_0"], "conv_0/fused_relu"),
        n("BatchNormalization", ["conv_0", "bn_1.scale", "bn_1.bias", "bn_1.mean", "bn_1.var"], ["bn_1"], "bn_1",
          epsilon=1e-5),
        n("Add", ["bn_1", "conv_0"], ["add_2"], "add_2"),
        n("MaxPool", ["add_2"], ["pool_3"], "pool_3", kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0]),
        n("GlobalAveragePool", ["pool_3"], ["gap_4"], "gap_4"),
        n("Flatten", ["gap_4"], ["flatten_5"], "flatten_5", axis=1),
        n("Gemm", ["flatten_5", "dense_6.weight", "dense_6.bias"], ["dense_6"], "dense_6", transB=1),
    ]
    inits = [init("conv_0.weight", 2, 1, 3, 3), init("conv_0.bias", 2), init("bn_1.scale", 2), init("bn_1.bias", 2),
             init("bn_1.mean", 2), numpy_helper.from_array(np.array([0.5, 2.0], np.float32), "bn_1.var"),
             init("dense_6.weight", 3, 2), init("dense_6.bias", 3)]
    meta = {"trainbench.input_scale": "0.003921569", "trainbench.input_shift": "0",
            "trainbench.class_names": json.dumps(["a", "b", "c"]), "trainbench.source_run": "seed"}
    return model(nodes, inits, [value("input", "N", 1, 6, 6)], value("dense_6", "N", 3), meta)


def foreign_mlp():
    n = helper.make_node
    nodes = [n("Gemm", ["x", "fc.weight", "fc.bias"], ["h"], "Gemm_0", transB=1), n("Relu", ["h"], ["y"], "Relu_1")]
    inits = [init("fc.weight", 3, 4, raw=False), init("fc.bias", 3, raw=False)]
    return model(nodes, inits, [value("x", 1, 4), value("fc.weight", 3, 4), value("fc.bias", 3)], value("y", 1, 3),
                 opset=11)


def conv_gemm():
    n = helper.make_node
    nodes = [
        n("Conv", ["input", "c.weight"], ["c"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Flatten", ["c"], ["g/gemm_flat"], "g/gemm_flatten", axis=1),
        n("Gemm", ["g/gemm_flat", "g.weight", "g.bias"], ["g"], "g", transB=1),
    ]
    inits = [init("c.weight", 2, 1, 3, 3), init("g.weight", 3, 32), init("g.bias", 3)]
    return model(nodes, inits, [value("input", "N", 1, 4, 4)], value("g", "N", 3))


def refused_op():
    nodes = [helper.make_node("LayerNormalization", ["x"], ["y"], "ln")]
    return model(nodes, [], [value("x", "N", 4)], value("y", "N", 4))


def main():
    os.makedirs(OUT, exist_ok=True)
    cnn = small_cnn()
    seeds = {"small_cnn.onnx": cnn, "foreign_mlp.onnx": foreign_mlp(), "refused_op.onnx": refused_op(),
             "truncated.onnx": cnn[: len(cnn) // 2], "conv_gemm.onnx": conv_gemm()}
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
