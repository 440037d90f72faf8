#!/usr/bin/python3
"""Retrain Headlight's zoo (resources/models): one command, deterministic seeds, CPU only.

    /usr/bin/python3 tools/train/train_zoo.py              # every model, in ZOO order
    /usr/bin/python3 tools/train/train_zoo.py --only pre_ln rope
    /usr/bin/python3 tools/train/train_zoo.py --goldens    # rewrite the goldens only
    (two processes on the two cores: --only A B --no-goldens & --only C D --no-goldens; --goldens)

Needs python3-torch, python3-numpy and, for the English models, the Debian package jargon-text
(the corpus; docs/zoo.md).  Each model is written as a checkpoint folder of docs/zoo-format.md:
config.json, model.safetensors, tokenizer.json, tokenizer_config.json, zoo.json (task, training,
loss curve, held-out result, parameters, example text) and golden.safetensors (float64 results of
tools/zoo/model.py for 2–3 inputs: "input{i}.attentions", ".last_hidden_state", ".logits" and the
internals, stored f32), all listed in resources/models/goldens.json for the C++ tests
(tests/backends/test_zoo_models.cpp, on both backends).
"""
import argparse
import functools
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(REPO, "tools", "zoo")]

import numpy as np  # noqa: E402
import torch  # noqa: E402

import byte_tokenizer as B  # noqa: E402
import data  # noqa: E402
import make_zoo_goldens as G  # noqa: E402
import model as M  # noqa: E402
import train  # noqa: E402

OUT = os.path.join(REPO, "resources", "models")
SIZE_BUDGET = 60 * 1000 * 1000

# The sparse mask depends only on (spec, T, H) but model.py rebuilds it in Python every pass.
_sparse_mask = M.VR.sparse_mask


@functools.lru_cache(maxsize=64)
def _cached_mask(key, T, H):
    return _sparse_mask(json.loads(key), T, H)


M.VR.sparse_mask = lambda spec, T, H: _cached_mask(json.dumps(spec, sort_keys=True), T, H)


def config(section, layers=4, D=128, I=256, positions=64, encoder=False):
    """A causal LM's config.json, or with `encoder` a masked-byte encoder's (vocabulary with [MASK])."""
    return {"model_type": "headlight", "vocab_size": B.MASKED_VOCAB_SIZE if encoder else B.VOCAB_SIZE,
            "hidden_size": D, "num_hidden_layers": layers, "num_attention_heads": 4, "intermediate_size": I,
            "max_position_embeddings": positions, "layer_norm_eps": 1e-5, "is_decoder": not encoder,
            "headlight": section}


# English: every model the same sizes (D 64, 4 layers, 4 heads, I 128), data (64-byte
# windows, 16 a batch), seed, learning rate and steps, so that the variants compare fairly.
ENGLISH = dict(task="english", steps=1000, batch=16, lr=1e-3, T=64)
ENGLISH_SIZES = dict(layers=4, D=64, I=128)
ENGLISH_TEXT = "The hacker found the bug in the kernel at three in the morning."
ENGLISH_INPUTS = [ENGLISH_TEXT, "A kludge is a clever but ugly fix.", "RTFM: read the manual first!"]
# Associative recall: 2 layers of D 64, trained with 4–12 pairs (prompt ≤ 49 bytes), tested also
# with 24 pairs (97 bytes): the extrapolation lesson for position schemes with no length limit.
RECALL = dict(task="recall", steps=1500, batch=32, lr=2e-3, low=4, high=12, long=24)
RECALL_TEXT = "a3k7q1z9m4>k7z9a3m4q1"
RECALL_INPUTS = [RECALL_TEXT, "c5x2b8d0>b8c5d0x2", "r1s2t3u4v5w6>w6r1v5"]
# Fixed sinusoids (entries ±1) need tokens on their scale: N(0, 1) rows instead of N(0, 0.02).
RECALL_SINUSOIDAL = dict(RECALL, token_std=1.0)
SMALL = dict(layers=2, D=64, I=256)
# ACT starts by pondering (halting bias −2: p ≈ 0.12 a step) with a ponder cost of 0.001, so that
# halting early has to be learned where the sum allows it (t2t's +1 and 0.01 collapsed to one step).
ADDITION = dict(task="addition", steps=1000, batch=32, lr=3e-3, low=3, high=3, aux_weight=0.001, halting_bias=-2.0, token_std=1.0)
ADDITION_INPUTS = ["987+654=5421", "505+505=0101", "120+301=4210"]
# ACT on English: one shared block of D 128 (as ut_act), the addition model's halting start.
ENGLISH_ACT = dict(ENGLISH, aux_weight=0.001, halting_bias=-2.0, token_std=1.0)
# Adaptive span: every head starts seeing 48 bytes back; a byte of span costs 0.002/4 nats a head.
ENGLISH_SPAN = dict(ENGLISH, aux_weight=0.002)
# Masked bytes (encoders): 30 % of each window masked, windows of 16–64 bytes, 32 a batch (about
# as many bytes scored per step as in ENGLISH's next-byte batches). RoPE positions: with learned
# ones both encoders stayed at the unigram loss for 1500 steps (a masked byte must find its
# neighbours by position alone; docs/zoo.md).
MASKED_ENGLISH = dict(task="masked_english", steps=2000, batch=32, lr=2e-3, T=64, low=16, rate=0.3)
MASKED_SIZES = dict(ENGLISH_SIZES, encoder=True)
MASKED_TEXT = "The hacker found the b[MASK]g in the k[MASK]rnel at three in the m[MASK]rning."
MASKED_INPUTS = [MASKED_TEXT, "A kl[MASK]dge is a clever but [MASK]gly fix.", "RTFM: read the m[MASK]nual first!"]
# Copy, reverse, sort (4–12 letters): 2 layers of D 64 with RoPE, as recall; reverse left its
# plateau only after 900 steps, so it trains for 3000. Brackets (4–16, one edit from balanced
# half the time) stayed at chance with that recipe: 4 Pre-LN layers, 3000 steps at lr 1e-3.
TASK = dict(steps=1500, batch=32, lr=2e-3, low=4, high=12)
TASK_SIZES = SMALL
TASK_SECTION = {"position": "rope"}
COPY_INPUTS = ["attention>attention", "kernel>kernel", "qwzxv>qwzxv"]
REVERSE_INPUTS = ["headlight>thgildaeh", "stressed>desserts", "abcdefg>gfedcba"]
SORT_INPUTS = ["transformer>aefmnorrrst", "headlight>adeghhilt", "zyxwv>vwxyz"]
BRACKETS_INPUTS = ["([])[]=y", "(()[[]])=y", "([)]=n"]
EYE4 = [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]

ZOO = [
    # name, config section, recipe, sizes, example text, golden inputs, one-line description
    ("post_ln", {}, ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Post-LN Transformer LM (Vaswani et al. 2017) on English bytes; the baseline of the trio"),
    ("pre_ln", {"norm": {"placement": "pre"}}, ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Pre-LN Transformer LM (Xiong et al. 2020) on English bytes, trained as post_ln"),
    ("realformer", {"prior": {"kind": "residual"}}, ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "RealFormer (He et al. 2020): Post-LN with residual attention scores, trained as post_ln"),
    ("ut_act", {"position": "sinusoidal", "act": {"max_steps": 6, "threshold": 0.99}}, ADDITION,
     {"layers": 1, "D": 128, "I": 256}, ADDITION_INPUTS[0], ADDITION_INPUTS,
     "Universal Transformer with ACT (Dehghani et al. 2019) on 3-digit addition, digits LSB first"),
    ("alibi", {"position": "alibi"}, RECALL, SMALL, RECALL_TEXT, RECALL_INPUTS,
     "ALiBi (Press et al. 2022) on associative recall; tested at twice the trained length"),
    ("rope", {"position": "rope"}, RECALL, SMALL, RECALL_TEXT, RECALL_INPUTS,
     "RoPE (Su et al. 2021) on associative recall; tested at twice the trained length"),
    ("sinusoidal", {"position": "sinusoidal"}, RECALL_SINUSOIDAL, SMALL, RECALL_TEXT, RECALL_INPUTS,
     "Sinusoidal positions (Vaswani et al. 2017) on associative recall; tested at twice the trained length"),
    ("t5", {"position": "t5"}, RECALL, SMALL, RECALL_TEXT, RECALL_INPUTS,
     "T5 relative buckets (Raffel et al. 2020) on associative recall; tested at twice the trained length"),
    ("rezero", {"norm": {"residual": "rezero"}}, ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "ReZero (Bachlechner et al. 2020): no norms, x + a*F(x) on English bytes"),
    ("longformer", {"mask": {"preset": "longformer", "window": 8, "dilation": 1, "global": [0]}}, ENGLISH, ENGLISH_SIZES,
     ENGLISH_TEXT, ENGLISH_INPUTS, "Longformer-style sparse attention (Beltagy et al. 2020): 8 back + token 0"),
    ("moe_top2", {"ffn": {"experts": 4, "routing": "top_k", "k": 2}}, ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Mixture of 4 experts, top-2 routing (GShard, Lepikhin et al. 2020) on English bytes"),
    ("moe_switch", {"ffn": {"experts": 4, "routing": "switch"}}, ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Mixture of 4 experts, Switch top-1 routing (Fedus et al. 2021) on English bytes"),
    ("moe_hash", {"ffn": {"experts": 4, "routing": "hash"}}, ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Mixture of 4 experts, hash routing (Roller et al. 2021) on English bytes"),
    ("bigbird", {"mask": {"preset": "bigbird", "block": 8, "random": 1, "seed": 7}}, ENGLISH, ENGLISH_SIZES,
     ENGLISH_TEXT, ENGLISH_INPUTS, "BigBird-style sparse attention (Zaheer et al. 2020): blocks of 8, 1 random block, global"),
    ("adaptive_span", {"span": {"z": [48.0], "ramp": 16.0}}, ENGLISH_SPAN, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Adaptive attention span (Sukhbaatar et al. 2019) on English bytes; spans learned from 48"),
    ("talking_heads", {"talking_heads": {"logits": EYE4, "weights": EYE4}}, ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT,
     ENGLISH_INPUTS, "Talking-heads attention (Shazeer et al. 2020) on English bytes; mixes learned from identity"),
    ("learned", {"position": "learned"}, RECALL, dict(SMALL, positions=128), RECALL_TEXT, RECALL_INPUTS,
     "Learned absolute positions (Devlin et al. 2019) on associative recall; tested at twice the trained length"),
    ("ut_act_english", {"position": "sinusoidal", "act": {"max_steps": 6, "threshold": 0.99}}, ENGLISH_ACT,
     {"layers": 1, "D": 128, "I": 256}, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Universal Transformer with ACT (Dehghani et al. 2019) on English bytes; one shared block"),
    ("transformer_xl", {"position": "xl", "recurrence": {"segment": 16, "memory": 16}}, ENGLISH, ENGLISH_SIZES,
     ENGLISH_TEXT, ENGLISH_INPUTS,
     "Transformer-XL (Dai et al. 2019) on English bytes: segments of 16, memory of 16, relative positions"),
    ("compressive", {"position": "xl", "recurrence": {"segment": 16, "memory": 16, "compressed": 8, "rate": 2}},
     ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Compressive Transformer (Rae et al. 2020) on English bytes: Transformer-XL plus 8 mean-pooled slots (rate 2)"),
    ("performer", {"attention": {"kernel": "favor", "features": 64, "orthogonal": True}, "seed": 1}, ENGLISH,
     ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Performer (Choromanski et al. 2021): FAVOR+ with 64 orthogonal random features (causal prefix sums) on English bytes"),
    ("reformer", {"attention": {"kernel": "lsh", "buckets": 8, "rounds": 2, "chunk": 16, "shared_qk": True}, "seed": 1},
     ENGLISH, ENGLISH_SIZES, ENGLISH_TEXT, ENGLISH_INPUTS,
     "Reformer LSH attention (Kitaev et al. 2020): 8 buckets, 2 rounds, chunks of 16, shared QK on English bytes"),
    ("copy", TASK_SECTION, dict(TASK, task="copy"), TASK_SIZES, COPY_INPUTS[0], COPY_INPUTS,
     "Post-LN, RoPE, 2 layers on copy (4-12 letters, then them again): each answer letter should attend n + 1 back"),
    ("reverse", TASK_SECTION, dict(TASK, task="reverse", steps=3000), TASK_SIZES, REVERSE_INPUTS[0], REVERSE_INPUTS,
     "Post-LN, RoPE, 2 layers on reverse (4-12 letters, then backwards): attention should trace the anti-diagonal"),
    ("sort", TASK_SECTION, dict(TASK, task="sort"), TASK_SIZES, SORT_INPUTS[0], SORT_INPUTS,
     "Post-LN, RoPE, 2 layers on sort (4-12 letters, then in order): each answer letter should attend to the next one up"),
    ("brackets", dict(TASK_SECTION, norm={"placement": "pre"}), dict(TASK, task="brackets", high=16, steps=3000, lr=1e-3),
     ENGLISH_SIZES, BRACKETS_INPUTS[0], BRACKETS_INPUTS,
     "Pre-LN, RoPE, 4 layers on balanced brackets (4-16 of ( ) [ ], then y or n)"),
    ("linformer", {"position": "rope", "attention": {"kernel": "linformer", "projected": 16}}, MASKED_ENGLISH,
     MASKED_SIZES, MASKED_TEXT, MASKED_INPUTS,
     "Linformer (Wang et al. 2020a): keys and values projected to 16 rows by learned E, F (from mean pooling), RoPE; "
     "an encoder on masked English bytes"),
    ("encoder", {"position": "rope"}, MASKED_ENGLISH, MASKED_SIZES, MASKED_TEXT, MASKED_INPUTS,
     "Softmax encoder (Post-LN, RoPE; the linformer model's baseline) on masked English bytes"),
]
# LSH: a golden input is refused when a hash argmax sits this close to a tie, relative to the
# largest entry (float32 could flip it).
LSH_MARGIN = 1e-4


def dataset(recipe):
    if recipe["task"] == "english":
        return data.English(recipe["T"])
    if recipe["task"] == "masked_english":
        return data.MaskedEnglish(recipe["T"], recipe["low"], recipe["rate"])
    return data.Synthetic(recipe["task"], recipe["low"], recipe["high"])


def results(model, recipe, ds):
    """Held-out result: English loss (nats and bits per byte); task accuracy per scored byte and
    per sample, at the trained lengths and, for recall, at 2T."""
    if recipe["task"] in ("english", "masked_english"):
        r = train.evaluate(model, *ds.held_out())
        return {"heldout_loss": round(r["loss"], 4), "bits_per_byte": round(r["loss"] / np.log(2), 4),
                "heldout_accuracy": round(r["accuracy"], 4)}
    r = train.evaluate(model, *ds.held_out())
    out = {"heldout_loss": round(r["loss"], 4), "accuracy": round(r["accuracy"], 4), "exact": round(r["exact"], 4)}
    if "long" in recipe:
        long = train.evaluate(model, *ds.held_out(n=recipe["long"]))
        out["long"] = {"pairs": recipe["long"], "accuracy": round(long["accuracy"], 4),
                       "exact": round(long["exact"], 4)}
    if recipe["task"] == "addition":
        out["ponder"] = ponder_by_digit(model, ds, recipe["high"])
    return out


def ponder_by_digit(model, ds, n, count=512):
    """ACT's ponder N + R at the position that predicts each sum digit (LSB first), averaged
    over held-out samples, split by whether a carry comes into that digit."""
    rng = np.random.RandomState(777)
    table = [[[], []] for _ in range(n + 1)]
    with torch.no_grad():
        for _ in range(count):
            prompt, answer = ds.sample(rng, n)
            ids, _ = data.encode_sample(prompt, answer)
            ponder = model(torch.tensor(ids))["internals"]["ponder"]
            for i, c in enumerate(data.carries(prompt, n)):
                table[i][c].append(float(ponder[len(prompt) + i - 1]))
    mean = lambda v: round(float(np.mean(v)), 3) if v else None  # noqa: E731
    return [{"digit": i, "no_carry": mean(a), "carry": mean(b), "count_carry": len(b)}
            for i, (a, b) in enumerate(table)]


def write_goldens(name, folder, inputs):
    """golden.safetensors: model.py in float64 on the f32 weights, for each input; an input with
    an ACT or MoE decision within 1e-3 of its boundary, or an LSH hash within LSH_MARGIN (relative) of a tie,
    is refused (float32 could flip it)."""
    config = json.load(open(os.path.join(folder, "config.json")))
    h, masked = M.resolve(config), not config["is_decoder"]
    tensors, cases = {}, []
    spare = [t[:len(t) // 2 + k] for k in range(1, 8) for t in inputs]  # prefixes, if one is marginal
    for text in inputs + spare:
        if len(cases) == len(inputs):
            break
        i = len(cases)
        ids = B.encode(text, masked=masked)
        _, ref = G.run(folder, ids, torch.float64)
        _, f32 = G.run(folder, ids, torch.float32)
        try:
            if h["act"]["max_steps"]:
                G.check_act(name, ref["internals"], h)
            if h["ffn"]["experts"]:
                G.check_router(name, ref["internals"], 1 if h["ffn"]["routing"] == "switch" else h["ffn"]["k"])
            if "lsh_margin" in ref and float(ref["lsh_margin"]) <= LSH_MARGIN:
                raise G.Marginal(f"{name}: an LSH hash within {float(ref['lsh_margin']):.1e} (relative) of a tie")
        except G.Marginal as why:
            print(f"  golden input skipped: {why}")
            continue
        golden = G.golden_tensors(ref)
        for key, value in G.golden_tensors(f32).items():
            assert float((value.double() - golden[key]).abs().max()) < 1e-4, (name, key)
        tensors.update({f"input{i}.{k}": (v.float().numpy(), "F32") for k, v in golden.items()})
        cases.append({"name": f"{name}/{i}", "folder": name, "text": text, "ids": ids,
                      "prefix": f"input{i}.", "tensors": sorted(golden), "layers": len(ref["attentions"])})
    M.safetensors_io.save(os.path.join(folder, "golden.safetensors"), tensors, {"model": name})
    return cases


def parameter_count(model):
    return sum(v.numel() for v in model.format_state_dict().values())


def train_one(name, section, recipe, sizes, example, description):
    ds = dataset(recipe)
    cfg = config(section, **sizes)
    seed = 1234
    print(f"{name}: {recipe['task']}, {recipe['steps']} steps", flush=True)
    model, log = train.train(cfg, ds, recipe["steps"], seed, recipe["batch"], recipe["lr"],
                             aux_weight=recipe.get("aux_weight", train.AUX_WEIGHT),
                             halting_bias=recipe.get("halting_bias"), token_std=recipe.get("token_std"))
    folder = os.path.join(OUT, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    M.save(model, folder, {"format": "pt", "zoo": name})
    B.write(folder, masked=sizes.get("encoder", False))
    model = M.load(folder)  # evaluate what was written
    result = results(model, recipe, ds)
    curve = log["curve"]
    keep = max(1, len(curve) // 60)
    meta = {"name": name, "task": recipe["task"], "description": description,
            "training": {"steps": recipe["steps"], "seed": seed, "batch": recipe["batch"], "lr": recipe["lr"],
                         "aux_weight": recipe.get("aux_weight", train.AUX_WEIGHT),
                         **({"halting_bias": recipe["halting_bias"]} if "halting_bias" in recipe else {}),
                         **({"token_std": recipe["token_std"]} if "token_std" in recipe else {}),
                         "optimizer": "AdamW (0.9, 0.98), wd 0.01, warm-up 100, cosine to 0.1, clip 1",
                         **({"mask_rate": recipe["rate"]} if "rate" in recipe else {}),
                         "sequence": (f"{recipe['low']}-{recipe['T']} bytes" if "rate" in recipe else recipe.get("T"))
                         or f"{recipe['low']}-{recipe['high']} items",
                         "seconds": log["seconds"], "threads": torch.get_num_threads()},
            "loss_curve": curve[::keep] + ([curve[-1]] if (len(curve) - 1) % keep else []),
            "result": result, "parameters": parameter_count(model), "example_text": example}
    with open(os.path.join(folder, "zoo.json"), "w", newline="\n") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(f"  {name}: {log['seconds']} s, {meta['parameters']} parameters, {json.dumps(result)}", flush=True)


def write_index():
    """goldens.json: every golden input of every model in the folder (rewritten from scratch)."""
    cases = []
    for name, section, recipe, sizes, example, inputs, description in ZOO:
        folder = os.path.join(OUT, name)
        if os.path.isfile(os.path.join(folder, "model.safetensors")):
            cases += write_goldens(name, folder, inputs)
    golden = {"generator": "tools/train/train_zoo.py", "format": "docs/zoo-format.md", "cases": cases}
    with open(os.path.join(OUT, "goldens.json"), "w", newline="\n") as f:
        f.write(G.dumps(golden))
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(OUT) for f in fs)
    print(f"{len(cases)} golden inputs; zoo {size / 1e6:.2f} MB in {OUT}")
    if size > SIZE_BUDGET:
        sys.exit("the zoo is over its 60 MB budget")


def table():
    """The Markdown table of docs/zoo.md, from the zoo.json files."""
    rows = ["| model | variant | task | parameters | size (MB) | steps | time (s) | held-out result |",
            "|---|---|---|---|---|---|---|---|"]
    for name, *_ in ZOO:
        folder = os.path.join(OUT, name)
        if not os.path.isfile(os.path.join(folder, "zoo.json")):
            continue
        z = json.load(open(os.path.join(folder, "zoo.json")))
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)) / 1e6
        r = z["result"]
        if z["task"] == "english":
            result = f"{r['heldout_loss']:.3f} nats/byte ({r['bits_per_byte']:.2f} bits), next-byte acc. {r['heldout_accuracy']:.3f}"
        elif z["task"] == "masked_english":
            result = f"{r['heldout_loss']:.3f} nats/masked byte, masked-byte acc. {r['heldout_accuracy']:.3f}"
        else:
            result = f"loss {r['heldout_loss']:.3f}, acc. {r['accuracy']:.3f}, exact {r['exact']:.3f}"
            if "long" in r:
                result += f"; at {r['long']['pairs']} pairs acc. {r['long']['accuracy']:.3f}"
        rows.append(f"| {name} | {z['description'].split(' on ')[0]} | {z['task']} | {z['parameters']:,} | "
                    f"{size:.2f} | {z['training']['steps']} | {z['training']['seconds']:.0f} | {result} |")
    return "\n".join(rows)


def set_out(folder):
    global OUT
    OUT = folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="models to retrain (the others are kept)")
    parser.add_argument("--goldens", action="store_true", help="only rewrite the goldens")
    parser.add_argument("--out", default=OUT, help="the zoo folder (default resources/models)")
    parser.add_argument("--steps", type=int, help="override every model's steps (smoke runs)")
    parser.add_argument("--table", action="store_true", help="print docs/zoo.md's table")
    parser.add_argument("--no-goldens", action="store_true", help="train only (for parallel runs)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (1: on a loaded 2-core machine two threads ran 7x slower)")
    args = parser.parse_args()
    set_out(args.out)
    if args.table:
        print(table())
        return 0
    if args.steps:
        for z in ZOO:
            z[2]["steps"] = args.steps
    torch.set_num_threads(args.threads)
    names = [z[0] for z in ZOO]
    for name in args.only or []:
        if name not in names:
            sys.exit(f"unknown model '{name}' (one of {', '.join(names)})")
    if not args.goldens:
        for name, section, recipe, sizes, example, inputs, description in ZOO:
            if not args.only or name in args.only:
                train_one(name, section, recipe, sizes, example, description)
    if not args.no_goldens:
        write_index()
    return 0


if __name__ == "__main__":
    sys.exit(main())
