#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into tests/data/fuzz/<target>/: a few small valid
inputs and a few broken ones per target. Deterministic; rerun after changing it and commit the
files. Needs only the standard library (the TFRecord CRC is computed bit by bit here)."""
import gzip
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "data", "fuzz")
SOURCE = os.path.join(HERE, "..", "..")


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked(length)) + data + struct.pack("<I", masked(data))


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number, wire_type, payload=b""):
    if wire_type == 2:
        return varint(number << 3 | 2) + varint(len(payload)) + payload
    return varint(number << 3 | wire_type) + payload


def entry(key, feature):
    return field(1, 2, field(1, 2, key) + field(2, 2, feature))


def bytes_feature(*values):
    return field(1, 2, b"".join(field(1, 2, v) for v in values))


def float_feature(values, packed=True):
    if packed:
        return field(2, 2, field(1, 2, struct.pack("<%df" % len(values), *values)))
    return field(2, 2, b"".join(field(1, 5, struct.pack("<f", v)) for v in values))


def int64_feature(values, packed=True):
    enc = [varint(v & 0xFFFFFFFFFFFFFFFF) for v in values]
    if packed:
        return field(3, 2, field(1, 2, b"".join(enc)))
    return field(3, 2, b"".join(field(1, 0, e) for e in enc))


def example(*entries):
    return field(1, 2, b"".join(entries))


def idx(type_code, dims, data):
    return bytes([0, 0, type_code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + data


def checkpoint(shards, metadata=b""):
    """A trainbench checkpoint (docs/checkpoints.md): header, shard table, metadata, shard data."""
    table = b"".join(struct.pack("<I", len(n)) + n + struct.pack("<QI", len(d), crc32c(d)) for n, d in shards)
    head = b"\x89TBCKPT\n" + struct.pack("<IIQQI", 1, len(shards), len(table), len(metadata), crc32c(metadata))
    head += struct.pack("<I", crc32c(head))
    return head + table + struct.pack("<I", crc32c(table)) + metadata + b"".join(d for _, d in shards)


def ps_frame(kind, payload):
    """A frame of the parameter-server protocol (engine/net/framing.h)."""
    return struct.pack("<IHHQ", 0x53504254, 1, kind, len(payload)) + payload


def ps_str(text):
    return struct.pack("<I", len(text)) + text


def ps_floats(values):
    return struct.pack("<Q", len(values)) + struct.pack("<%df" % len(values), *values)


def ps_spans(spans):
    return struct.pack("<I", len(spans)) + b"".join(struct.pack("<QQ", o, c) for o, c in spans)


def store_frame(kind, payload):
    """A message of the rendezvous store (engine/rendezvous/rendezvouswire.h)."""
    return struct.pack("<IHHI", 0x564B4254, 1, kind, len(payload)) + payload


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width, height, depth, color, rows, interlace=0, extra=b""):
    """A PNG of the given IHDR and raw rows (each already prefixed with its filter byte)."""
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, interlace)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra + png_chunk(b"IDAT", zlib.compress(rows, 9)) +
            png_chunk(b"IEND", b""))


def read_source(path):
    with open(os.path.join(SOURCE, path), "rb") as f:
        return f.read()


def write(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def main():
    small = example(entry(b"image", bytes_feature(bytes([0, 64, 128, 255]))), entry(b"label", int64_feature([3])))
    floats = example(entry(b"height", int64_feature([1])), entry(b"image", float_feature([0.5, -1.0])),
                     entry(b"label", int64_feature([1])), entry(b"width", int64_feature([2])))
    write("fuzz_example", "bytes_image", small)
    write("fuzz_example", "float_image", floats)
    write("fuzz_example", "unpacked", example(entry(b"label", int64_feature([7], packed=False)),
                                              entry(b"image", float_feature([1.0, 2.0, 3.0], packed=False))))
    write("fuzz_example", "unknown_fields",
          field(9, 0, varint(300)) + example(entry(b"image", bytes_feature(b"\x01\x02") + field(5, 5, b"abcd")),
                                             entry(b"label", int64_feature([2])) + field(7, 3) + field(7, 4)))
    write("fuzz_example", "duplicate_keys", example(entry(b"image", bytes_feature(b"\x01")), entry(b"label", int64_feature([1])),
                                                    entry(b"image", bytes_feature(b"\x02\x03"))))
    write("fuzz_example", "missing_label", example(entry(b"image", bytes_feature(b"\x01"))))
    write("fuzz_example", "two_byte_strings", example(entry(b"image", bytes_feature(b"a", b"b")),
                                                      entry(b"label", int64_feature([1]))))

    records = frame(small) + frame(b"") + frame(floats)
    write("fuzz_tfrecord", "three_records", records)
    write("fuzz_tfrecord", "one_record", frame(b"hello"))
    write("fuzz_tfrecord", "zlib_records", zlib.compress(records, 6))
    broken = bytearray(records)
    broken[20] ^= 0x10  # inside the first record's data
    write("fuzz_tfrecord", "data_crc_mismatch", bytes(broken))
    broken = bytearray(records)
    broken[2] ^= 0x01  # inside the first length
    write("fuzz_tfrecord", "length_crc_mismatch", bytes(broken))
    write("fuzz_tfrecord", "truncated_footer", records[:-2])
    write("fuzz_tfrecord", "truncated_header", frame(b"x") + records[:7])

    write("fuzz_idx", "u8_2x3", idx(0x08, [2, 3], bytes(range(6))))
    write("fuzz_idx", "u8_2x3.gz", gzip.compress(idx(0x08, [2, 3], bytes(range(6))), mtime=0))
    write("fuzz_idx", "i16_3", idx(0x0B, [3], b"\x00\x01\x00\x02\xff\xfe"))
    write("fuzz_idx", "f64_1x1x1x1", idx(0x0E, [1, 1, 1, 1], struct.pack(">d", 0.25)))
    write("fuzz_idx", "too_short", idx(0x08, [4, 4], bytes(10)))
    params = struct.pack("<4f", 0.5, -1.0, 0.0, 2.0)
    ck = checkpoint([(b"params", params), (b"optimizer.state", b"adam.m\nadam.v"), (b"adam.m", params),
                     (b"adam.v", bytes(16))], b'{"run_id": 1, "step": 20}')
    write("fuzz_checkpoint", "adam", ck)
    write("fuzz_checkpoint", "empty", checkpoint([]))
    write("fuzz_checkpoint", "empty_shard", checkpoint([(b"w", b"")], b"{}"))
    write("fuzz_checkpoint", "truncated", ck[:60])
    broken = bytearray(ck)
    broken[-3] ^= 0x04  # inside the last shard
    write("fuzz_checkpoint", "shard_crc_mismatch", bytes(broken))
    # fuzz_framing: the first byte picks the piece size the stream is fed in.
    push = struct.pack("<IQ", 3, 12) + struct.pack("<Q", 2) + struct.pack("<2f", 0.5, -0.25)
    write("fuzz_framing", "three_frames", b"\x05" + ps_frame(1, b"") + ps_frame(5, push) + ps_frame(8, b"\x02\x00\x00\x00ok"))
    write("fuzz_framing", "truncated", b"\x02" + ps_frame(5, push)[:-3])
    write("fuzz_framing", "wrong_version", b"\x01" + struct.pack("<IHHQ", 0x53504254, 2, 1, 0))
    write("fuzz_framing", "too_long", b"\x07" + struct.pack("<IHHQ", 0x53504254, 1, 4, 1 << 20))
    # fuzz_psprotocol: messages of engine/strategy/psprotocol.h, one stream of frames per file.
    hello = ps_frame(1, ps_str(b"0123456789abcdef") + struct.pack("<II", 2, 1))
    init = ps_frame(4, struct.pack("<IQ", 0, 40) + ps_spans([(0, 2), (10, 1)]) + ps_floats([0.5, -1.0, 2.0]) +
                    struct.pack("<I", 2) + ps_str(b"adam.m") + ps_floats([0.1, 0.2, 0.3]) +
                    ps_str(b"adam.v") + ps_floats([0.01, 0.02, 0.03]))
    push = ps_frame(8, struct.pack("<QQI", 7, 3, 1) + ps_floats([0.25, -0.5, 1.0]))
    write("fuzz_psprotocol", "coordinator", hello + init + ps_frame(5, struct.pack("<Q", 0)) + ps_frame(10, b"") +
          ps_frame(11, struct.pack("<Q", 1) + ps_floats([1.0]) + struct.pack("<I", 1) + ps_str(b"sgd.momentum") +
                   ps_floats([0.5])) + ps_frame(12, b""))
    write("fuzz_psprotocol", "worker_step", hello + ps_frame(6, struct.pack("<Q", 7)) +
          ps_frame(7, struct.pack("<Q", 3) + ps_floats([0.5, -1.0, 2.0])) + push + ps_frame(9, struct.pack("<QQ", 4, 1)))
    layout = ps_frame(13, struct.pack("<6Q", 1, 2, 2, 3, 51, 1000) + struct.pack("<I", 2) +
                      ps_str(b"127.0.0.1:4001") + ps_spans([(0, 30)]) + ps_str(b"[::1]:4002") + ps_spans([(30, 21)]))
    task = ps_frame(14, struct.pack("<QIQQ", 1, 0, 99, 2) + ps_floats([0.5] * 8) + struct.pack("<Q", 2) +
                    struct.pack("<2i", 0, 2))
    result = ps_frame(15, struct.pack("<QIdQddd", 1, 0, 1.0986, 2, 0.01, 0.002, 0.003) + struct.pack("<IQQ", 2, 0, 1))
    write("fuzz_psprotocol", "job", ps_frame(2, struct.pack("<II", 1, 0)) + layout + task + ps_frame(16, b"") + result +
          ps_frame(17, struct.pack("<IQ", 1, 2) + ps_str(b"parameter server 1 lost")) +
          ps_frame(3, ps_str(b"wrong job token")))
    write("fuzz_psprotocol", "lying_count", ps_frame(7, struct.pack("<QQ", 1, 1 << 40) + struct.pack("<f", 1.0)))
    write("fuzz_psprotocol", "truncated_init", hello + init[:-5])
    write("fuzz_idx", "gzip_cut", gzip.compress(idx(0x08, [8, 8], bytes(range(64))), mtime=0)[:30])
    more_seeds()


def more_seeds():
    # fuzz_experiment: experiment files; after a line "--set", one override per line.
    write("fuzz_experiment", "minimal.json", b'{"model": {"preset": "mlp"}}')
    write("fuzz_experiment", "fmnist-mlp.json", read_source("experiments/fmnist-mlp.json"))
    write("fuzz_experiment", "layers.json", b'{"name": "c", "model": {"layers": [{"type": "conv2d", "filters": 4, '
          b'"kernel": 3}, {"type": "relu"}, {"type": "maxpool2d", "size": 2}, {"type": "flatten"}, '
          b'{"type": "dense", "units": 10}]}, "train": {"epochs": 1, "batch_size": 32}}')
    write("fuzz_experiment", "sweep.json", b'{"model": {"preset": "mlp"}, "sweep": {"strategy.replicas": [1, 2], '
          b'"optimizer.type": ["sgd", "adam"], "data.path": ["a", "b/c"]}}')
    write("fuzz_experiment", "overrides.json", b'{"model": {"preset": "cnn"}}\n--set\ntrain.epochs=3\n'
          b'model.preset=mlp\nsweep={"seed": [1, 2]}\nname=2024\ndevice.type=gpu-v100')
    write("fuzz_experiment", "strategy.json", b'{"model": {"preset": "logreg"}, "strategy": {"type": "tpu_pod", '
          b'"slice": "v3-8"}, "device": {"type": "tpu-v3"}, "seed": 7}')
    write("fuzz_experiment", "too_deep.json", b'{"model": {"preset": "mlp"}, "x": ' + b"[" * 40 + b"]" * 40 + b"}")
    write("fuzz_experiment", "syntax.json", b'{"model": {"preset": "mlp",}, "model": 1}')
    # fuzz_devicecatalog: the shipped catalog and small ones.
    write("fuzz_devicecatalog", "devices.json", read_source("resources/devices.json"))
    write("fuzz_devicecatalog", "cpu.json", b'{"format": 1, "devices": [{"id": "host", "kind": "cpu", "name": "H", '
          b'"compute": {"peak_fp32_tflops": "calibration"}}]}')
    write("fuzz_devicecatalog", "too_deep.json", b'{"format": 1, "about": ' + b"[" * 40 + b"]" * 40 + b"}")
    # fuzz_rendezvouswire: message streams of the rendezvous store, either way.
    def s(text):
        return struct.pack("<I", len(text)) + text
    write("fuzz_rendezvouswire", "client", store_frame(1, s(b"0123456789abcdef0123456789abcdef")) +
          store_frame(2, s(b"rank_0") + b"\x00value") + store_frame(3, s(b"rank_1")) +
          store_frame(4, struct.pack("<II", 5000, 2) + s(b"rank_0") + s(b"rank_1")))
    write("fuzz_rendezvouswire", "server", store_frame(16, b"") + store_frame(16, b"value") + store_frame(17, s(b"k")) +
          store_frame(18, struct.pack("<I", 1) + s(b"rank_3")) + store_frame(19, s(b"wrong job token")))
    write("fuzz_rendezvouswire", "lying_wait", store_frame(4, struct.pack("<II", 10, 1000000)))
    write("fuzz_rendezvouswire", "too_long", store_frame(2, s(b"k"))[:8] + struct.pack("<I", 1 << 30))
    # fuzz_image: the first byte picks the channels asked for; PNGs of each colour type, and JPEGs.
    write("fuzz_image", "grey8.png", b"\x00" + png(3, 2, 8, 0, b"\x00\x01\x02\x03\x01\x10\x10\x10"))
    write("fuzz_image", "rgb8.png", b"\x02" + png(2, 2, 8, 2, b"\x00" + bytes(range(6)) + b"\x02" + bytes(range(6, 12))))
    write("fuzz_image", "rgba16_interlaced.png", b"\x01" + png(2, 2, 16, 6, bytes(1 + 16) * 4, interlace=1))
    write("fuzz_image", "palette_trns.png", b"\x00" + png(4, 1, 2, 3, b"\x00\x1b", extra=png_chunk(b"PLTE", bytes(range(12))) +
                                                          png_chunk(b"tRNS", b"\x00\x80")))
    write("fuzz_image", "grey1.png", b"\x01" + png(9, 2, 1, 0, b"\x00\xaa\x80\x00\x55\x00"))
    write("fuzz_image", "huge_header.png", b"\x00" + png(4096, 4096, 8, 0, b"")[:33])
    write("fuzz_image", "palette.png", b"\x00" + read_source("tests/data/images/pil_palette_trns.png"))
    write("fuzz_image", "rgb_q95.jpg", b"\x02" + read_source("tests/data/images/pil_rgb_q95.jpg"))
    write("fuzz_image", "grey_progressive.jpg", b"\x00" + read_source("tests/data/images/pil_grey_progressive.jpg"))


if __name__ == "__main__":
    main()
