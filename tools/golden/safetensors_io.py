"""Minimal safetensors reader/writer (numpy only).

Format (https://github.com/huggingface/safetensors):
    8 bytes   little-endian u64 N = length of the JSON header
    N bytes   JSON header {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}
              padded with spaces so that 8 + N is a multiple of 8
    rest      raw little-endian tensor bytes; data_offsets are relative to the end of the header

Tensors are written in sorted-name order, contiguous, without gaps.  Supported dtypes:
F32, F16, BF16, I64.  BF16 is produced from float32 with round-to-nearest-even (what
torch's .to(torch.bfloat16) does) by `round_to_bf16`.
"""
import json
import os
import struct

import numpy as np

_NP_OF = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "I64": np.dtype("<i8"), "BF16": np.dtype("<u2")}


def round_to_bf16_bits(x):
    """float array -> uint16 array holding bfloat16 bits (round to nearest, ties to even)."""
    f = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    if not np.all(np.isfinite(f)):
        raise ValueError("non-finite value in bf16 conversion")
    u = f.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_bits_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def round_to_bf16(x):
    """The float32 values a bfloat16 store of x gives back."""
    return bf16_bits_to_f32(round_to_bf16_bits(x))


def round_to_f16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def round_to_dtype(x, dtype):
    if dtype == "F32":
        return np.asarray(x, dtype=np.float32)
    if dtype == "F16":
        return round_to_f16(x)
    if dtype == "BF16":
        return round_to_bf16(x)
    raise ValueError(dtype)


def _encode(arr, dtype):
    if dtype == "BF16":
        return round_to_bf16_bits(arr).astype("<u2").tobytes()
    if dtype == "F16":
        a = np.asarray(arr, dtype=np.float32)
        if not np.all(np.isfinite(a.astype(np.float16))):
            raise ValueError("value out of float16 range")
        return a.astype("<f2").tobytes()
    return np.ascontiguousarray(np.asarray(arr).astype(_NP_OF[dtype])).tobytes()


def save(path, tensors, metadata=None):
    """tensors: {name: (np.ndarray, dtype_str)}.  Writes deterministic bytes."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        arr, dtype = tensors[name]
        blob = _encode(arr, dtype)
        header[name] = {"dtype": dtype, "shape": [int(s) for s in np.shape(arr)],
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - (8 + len(hjson)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)
    return offset  # bytes of tensor data


def load(path):
    """-> ({name: np.ndarray (BF16 returned as float32)}, {name: dtype}, metadata)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out, dtypes = {}, {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        raw = np.frombuffer(data[base + b:base + e], dtype=_NP_OF[info["dtype"]])
        if info["dtype"] == "BF16":
            raw = bf16_bits_to_f32(raw)
        out[name] = raw.reshape(info["shape"]).copy()
        dtypes[name] = info["dtype"]
    return out, dtypes, meta


def load_folder_f64(folder):
    """{name: float64 np.ndarray} of every *.safetensors file of a checkpoint folder (shards in
    name order), for the references, which compute in float64."""
    tensors = {}
    for f in sorted(os.listdir(folder)):
        if f.endswith(".safetensors"):
            tensors.update(load(os.path.join(folder, f))[0])
    return {k: v.astype(np.float64) for k, v in tensors.items()}
