#!/usr/bin/python3
"""The torch.save fixtures of tests/data/torch (tests/unit/test_torch_checkpoint.cpp).

Run with Debian's python3-torch (1.13) from the repository root:
    /usr/bin/python3 tools/golden/make_torch_fixtures.py

Every valid file is written by torch.save itself, the way real tools write checkpoints:
- gpt2/pytorch_model.bin: `torch.save(model.state_dict(), ...)` of a real nn.Module tree holding
  the gpt2 golden's F32 weights: an OrderedDict carrying _metadata, lm_head.weight tied to
  transformer.wte.weight (one storage), every c_attn.weight a transposed (non-contiguous) view,
  and each ln_1's weight and bias views at offsets 0 and 32 of one storage.
- gpt2_plain/: what transformers' save_pretrained(safe_serialization=False) writes for a sharded
  model: a plain dict per shard (torch.save's default protocol 2) and pytorch_model.bin.index.json,
  from the gpt2_plain golden's BF16 weights, in the golden's two shards.
- bert_f16/: the bert golden in F16, as a state_dict() saved with pickle protocol 5, beside
  model.safetensors holding the same F16 values.
- views/protocol_{2,3,4,5}.bin: one small state dict (F32 views of every kind, F16, BF16, I64,
  a Parameter, a 0-d and an empty tensor) saved with each protocol; views/expected.safetensors
  holds each tensor's values made contiguous.
- legacy.bin: torch.save(..., _use_new_zipfile_serialization=False), refused.
- hostile/*.bin: archives and pickles written by hand (below), each refused.
"""
import collections
import io
import json
import os
import pickle
import struct
import sys
import zipfile
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import safetensors_io  # noqa: E402

ROOT = "tests/data"
OUT = os.path.join(ROOT, "torch")


def torch_tensor(array, dtype):
    """An f32 numpy array (values already representable in dtype) as a torch tensor of dtype."""
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(dtype)


def module_tree(parameters):
    """A real nn.Module whose state_dict() has exactly these names; values may share storage."""
    root = torch.nn.Module()
    for name, tensor in parameters.items():
        *path, leaf = name.split(".")
        module = root
        for part in path:
            if not hasattr(module, part):
                module.add_module(part, torch.nn.Module())
            module = getattr(module, part)
        if isinstance(tensor, torch.nn.Parameter):
            module.register_parameter(leaf, tensor)
        else:
            module.register_parameter(leaf, torch.nn.Parameter(tensor, requires_grad=False))
    return root


def gpt2_state_dict():
    weights, _, _ = safetensors_io.load(os.path.join(ROOT, "models/gpt2/model.safetensors"))
    params = collections.OrderedDict()
    for name, array in weights.items():
        if name.endswith("attn.c_attn.weight"):
            # Stored transposed: the tensor is a [32, 96] view with stride (1, 32).
            params[name] = torch.nn.Parameter(torch.from_numpy(array.T.copy()).t(),
                                              requires_grad=False)
        elif name.endswith("ln_1.weight"):
            both = torch.from_numpy(np.concatenate([array, weights[name[:-6] + "bias"]]))
            params[name] = torch.nn.Parameter(both[:32], requires_grad=False)
            params[name[:-6] + "bias"] = torch.nn.Parameter(both[32:], requires_grad=False)
        elif not name.endswith("ln_1.bias"):
            params[name] = torch.nn.Parameter(torch.from_numpy(array.copy()), requires_grad=False)
    params["lm_head.weight"] = params["transformer.wte.weight"]  # tied, as GPT2LMHeadModel ties
    state = module_tree(params).state_dict()
    assert state["lm_head.weight"].data_ptr() == state["transformer.wte.weight"].data_ptr()
    assert not state["transformer.h.0.attn.c_attn.weight"].is_contiguous()
    assert state["transformer.h.0.ln_1.bias"].storage_offset() == 32
    assert hasattr(state, "_metadata")
    return state


def write_gpt2():
    os.makedirs(os.path.join(OUT, "gpt2"), exist_ok=True)
    torch.save(gpt2_state_dict(), os.path.join(OUT, "gpt2/pytorch_model.bin"))


def write_gpt2_plain_shards():
    """transformers' save_pretrained(safe_serialization=False): shard dicts and an index."""
    folder = os.path.join(OUT, "gpt2_plain")
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(ROOT, "models/gpt2_plain")
    weight_map = {}
    total = 0
    for number in (1, 2):
        weights, _, _ = safetensors_io.load(
            os.path.join(source, f"model-0000{number}-of-00002.safetensors"))
        shard = {name: torch_tensor(array, torch.bfloat16) for name, array in weights.items()}
        shard_file = f"pytorch_model-0000{number}-of-00002.bin"
        torch.save(shard, os.path.join(folder, shard_file))
        for name, tensor in shard.items():
            weight_map[name] = shard_file
            total += tensor.numel() * tensor.element_size()
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(folder, "pytorch_model.bin.index.json"), "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")


def write_bert_f16():
    folder = os.path.join(OUT, "bert_f16")
    os.makedirs(folder, exist_ok=True)
    weights, _, _ = safetensors_io.load(os.path.join(ROOT, "models/bert/model.safetensors"))
    halves = {name: safetensors_io.round_to_f16(array) for name, array in weights.items()}
    params = {name: torch_tensor(array, torch.float16) for name, array in halves.items()}
    torch.save(module_tree(params).state_dict(), os.path.join(folder, "pytorch_model.bin"),
               pickle_protocol=5)
    safetensors_io.save(os.path.join(folder, "model.safetensors"),
                        {name: (array, "F16") for name, array in halves.items()},
                        metadata={"format": "pt"})


def views_state_dict():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 8 - 1
    state = collections.OrderedDict()
    state["base"] = base
    state["transposed"] = base.t()
    state["row_at_offset"] = base[2]
    state["every_second_column"] = base[:, ::2]
    state["block"] = base[1:3, 2:5]
    state["expanded"] = base[0, :3].unsqueeze(0).expand(2, 3)  # stride 0
    state["half"] = (base / 3).half()
    state["bfloat16"] = (base * 7).bfloat16().t()
    state["position_ids"] = torch.arange(10, dtype=torch.int64).unsqueeze(0)
    state["scalar"] = torch.tensor(2.5)
    state["empty"] = torch.zeros(0, 3)
    state["parameter"] = torch.nn.Parameter(torch.linspace(-1, 1, 5))
    state._metadata = collections.OrderedDict({"": {"version": 1}})
    return state


def write_views():
    folder = os.path.join(OUT, "views")
    os.makedirs(folder, exist_ok=True)
    state = views_state_dict()
    for protocol in (2, 3, 4, 5):
        torch.save(state, os.path.join(folder, f"protocol_{protocol}.bin"),
                   pickle_protocol=protocol)
    dtypes = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
              torch.int64: "I64"}
    expected = {}
    for name, tensor in state.items():
        values = tensor.detach().contiguous()
        array = values.float().numpy() if values.dtype != torch.int64 else values.numpy()
        expected[name] = (array, dtypes[values.dtype])
    safetensors_io.save(os.path.join(folder, "expected.safetensors"), expected)
    torch.save(state, os.path.join(OUT, "legacy.bin"), _use_new_zipfile_serialization=False)


# ------------------------------------------------------------------------------------------
# hostile files: a small stored-zip writer with knobs, and pickles written by hand
# ------------------------------------------------------------------------------------------

def small_archive():
    """The entries torch.save writes for a small state dict, as (name, bytes)."""
    buffer = io.BytesIO()
    base = torch.arange(12, dtype=torch.float32)
    torch.save(collections.OrderedDict(w=base.reshape(3, 4), b=base[4:8]), buffer)
    with zipfile.ZipFile(buffer) as archive:
        return [(info.filename.replace(info.filename.split("/")[0], "archive", 1),
                 archive.read(info)) for info in archive.infolist()]


def zip_bytes(entries, flags=0, zip64=False, grow=None):
    """A zip of (name, data[, deflated data]) entries, the deflated ones with method 8; every
    entry claims `flags`; `grow` = (i, n) makes entry i's central record claim n more bytes than
    it holds."""
    out = bytearray()
    central = bytearray()
    offsets = []
    for entry in entries:
        name, data = entry[0], entry[1]
        stored = entry[2] if len(entry) > 2 else data
        method = 8 if len(entry) > 2 else 0
        crc = zlib.crc32(data)
        offsets.append(len(out))
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0, crc,
                           len(stored), len(data), len(name.encode()), 0)
        out += name.encode() + stored
    for index, entry in enumerate(entries):
        name, data = entry[0], entry[1]
        stored = entry[2] if len(entry) > 2 else data
        method = 8 if len(entry) > 2 else 0
        offset = offsets[index]
        extra = b""
        size, compressed = len(data), len(stored)
        if grow and index == grow[0]:
            size, compressed = size + grow[1], compressed + grow[1]
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, size, compressed, offset)
            size = compressed = offset = 0xFFFFFFFF
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45 if zip64 else 20, flags,
                               method, 0, 0, zlib.crc32(data), compressed, size,
                               len(name.encode()), len(extra), 0, 0, 0, 0, offset)
        central += name.encode() + extra
    directory_offset = len(out)
    out += central
    count = len(entries)
    if zip64:
        record = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count,
                           len(central), directory_offset)
        out += struct.pack("<IIQI", 0x07064B50, 0, record, 1)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                           0xFFFFFFFF, 0)
    else:
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central),
                           directory_offset, 0)
    return bytes(out)


def with_pickle(entries, pickle_bytes):
    return [(name, pickle_bytes if name.endswith("data.pkl") else data) for name, data in entries]


class Reduce:
    """An object whose pickle calls `function(*arguments)` on load, as an attack would."""

    def __init__(self, function, *arguments):
        self.function, self.arguments = function, arguments

    def __reduce__(self):
        return self.function, self.arguments


def tensor_pickle(storage_key="0", storage_type="FloatStorage", numel=12, offset=0,
                  size=(3, 4), stride=(4, 1)):
    """A protocol-2 state dict {'w': tensor} by hand, with every field of the tensor chosen."""
    def ints(values):
        return b"(" + b"".join(b"K" + bytes([v]) for v in values) + b"t"
    return (b"\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00w"
            b"ctorch._utils\n_rebuild_tensor_v2\n("
            b"(X\x07\x00\x00\x00storagectorch\n" + storage_type.encode() + b"\n"
            b"X" + struct.pack("<I", len(storage_key)) + storage_key.encode() +
            b"X\x03\x00\x00\x00cpuK" + bytes([numel]) + b"tQ"
            b"K" + bytes([offset]) + ints(size) + ints(stride) +
            b"\x89ccollections\nOrderedDict\n)RtRu.")


def crc_mismatch(entries):
    """A stored data.pkl whose bytes changed after its CRC-32 was recorded."""
    archive = bytearray(zip_bytes(entries))
    at = archive.index(b"collections")
    archive[at] = ord("C")
    return bytes(archive)


def hostile_files():
    entries = small_archive()
    assert [name for name, _ in entries] == ["archive/data.pkl", "archive/data/0",
                                            "archive/version"], entries
    pkl = entries[0][1]
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = deflate.compress(b"\0" * (16 << 20)) + deflate.flush()
    files = {
        "control": zip_bytes(entries),
        "control_zip64": zip_bytes(entries, zip64=True),
        "hand_written_pickle": zip_bytes(with_pickle(entries, tensor_pickle())),
        "os_system": zip_bytes(with_pickle(entries, b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00id\x85R.")),
        "posix_system_by_pickle": zip_bytes(with_pickle(
            entries, pickle.dumps(Reduce(os.system, "id"), protocol=2))),
        "builtins_eval": zip_bytes(with_pickle(
            entries, pickle.dumps(Reduce(eval, "1+1"), protocol=4))),
        "subprocess_popen": zip_bytes(with_pickle(
            entries, pickle.dumps(Reduce(__import__("subprocess").Popen, ["id"]), protocol=4))),
        "reduce_of_reduce": zip_bytes(with_pickle(
            entries, b"\x80\x02ccollections\nOrderedDict\n)R)R.")),
        "reduce_of_storage_class": zip_bytes(with_pickle(
            entries, b"\x80\x02ctorch\nFloatStorage\n)R.")),
        "build_on_tensor": zip_bytes(with_pickle(
            entries, tensor_pickle()[:-2] + b"}X\x08\x00\x00\x00__dict__}sbu.")),
        "build_sets_class": zip_bytes(with_pickle(
            entries, b"\x80\x02ccollections\nOrderedDict\n)R}X\t\x00\x00\x00__class__Nsb.")),
        "inst_opcode": zip_bytes(with_pickle(
            entries, b"\x80\x02(X\x02\x00\x00\x00idios\nsystem\n.")),
        "persistent_id_not_storage": zip_bytes(with_pickle(
            entries, b"\x80\x02(X\x06\x00\x00\x00moduleX\x02\x00\x00\x00osX\x01\x00\x00\x000"
                     b"X\x03\x00\x00\x00cpuK\x01tQ.")),
        "nested_state_dict": zip_bytes(with_pickle(
            entries, b"\x80\x02}X\x05\x00\x00\x00model" + tensor_pickle()[2:-1] + b"s.")),
        "short_storage": zip_bytes(with_pickle(entries, tensor_pickle(numel=13))),
        "view_past_storage": zip_bytes(with_pickle(entries, tensor_pickle(offset=1))),
        "storage_without_record": zip_bytes(with_pickle(entries, tensor_pickle(storage_key="7"))),
        "zip_bomb": zip_bytes([(entries[0][0], entries[0][1]),
                               ("archive/data/0", b"\0" * (16 << 20), bomb)]),
        "deflated_pickle": zip_bytes([(entries[0][0], entries[0][1],
                                       zlib.compress(entries[0][1])[2:-4])] + entries[1:]),
        "encrypted": zip_bytes(entries, flags=1),
        "path_traversal": zip_bytes(entries + [("archive/../../evil", b"x")]),
        "absolute_path": zip_bytes(entries + [("/etc/cron.d/evil", b"x")]),
        "overlapping_entries": zip_bytes(entries, grow=(1, 40)),
        "duplicate_names": zip_bytes(entries + [entries[1]]),
        "two_top_folders": zip_bytes(entries + [("other/data/1", b"x")]),
        "big_endian": zip_bytes(entries + [("archive/byteorder", b"big")]),
        "crc_mismatch": crc_mismatch(entries),
        "truncated": zip_bytes(entries)[:300],
    }
    assert b"collections" in pkl
    folder = os.path.join(OUT, "hostile")
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(folder, name + ".bin"), "wb") as f:
            f.write(data)
    buffer = io.BytesIO()
    torch.save({"model": collections.OrderedDict(w=torch.ones(2))}, buffer)
    with open(os.path.join(folder, "lightning_style_checkpoint.bin"), "wb") as f:
        f.write(buffer.getvalue())


def main():
    torch.manual_seed(0)
    write_gpt2()
    write_gpt2_plain_shards()
    write_bert_f16()
    write_views()
    hostile_files()


if __name__ == "__main__":
    main()
