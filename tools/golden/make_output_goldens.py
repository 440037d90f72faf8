#!/usr/bin/python3
"""Regenerate the logit-lens and variant-effect goldens under tests/data/output/.

    /usr/bin/python3 tools/golden/make_output_goldens.py

Needs python3-numpy and python3-torch (Debian).  From the golden checkpoints of tests/data/models
(GPT-2, Llama, BERT-MLM), in float64 and independent of the engine:

  logit lens   hidden_states of models_ref.py (HF's output_hidden_states: the embeddings, then
               every layer, the last after the final norm); each but the last through the final
               norm (ln_f / model.norm; none for BERT) and the LM head (GPT-2: wte tied; Llama:
               lm_head.weight; BertForMaskedLM: cls.predictions, transform dense -> gelu ->
               LayerNorm, then the tied decoder and its bias, as modeling_bert.py's
               BertLMPredictionHead); the last is the model's logits.  Per row and position: the
               top token, its softmax probability, the entropy (nats) and the rank of the last
               row's top token (how many logits are strictly larger).
  variant      exact and variant passes of variant_reference.py (PyTorch); the logits of each
  effect       last hidden state; per position KL(p_exact || p_variant) (nats), the top-1 tokens,
               the top-5 flips (exact's top 5 missing from the variant's top 5); per layer and
               head the mean over valid queries of the JSD of the attention rows (bits); the
               relative change of the last hidden state over valid positions.

Writes tests/data/output/golden.json (the cases) and tests/data/output/<case>.safetensors.
Deterministic; the folder is rewritten.  See docs/golden-references.md.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models_ref as M  # noqa: E402
import safetensors_io as S  # noqa: E402
import variant_reference as R  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "tests", "data", "models")
OUT = os.path.join(REPO, "tests", "data", "output")
TOP_K = 5

# (case name, model folder, golden case of that model, variant spec or None for the lens only)
CASES = [
    ("gpt2_longformer", "gpt2", "punctuation", {"mask": {"preset": "longformer", "window": 2}}),
    ("gpt2_padding_alibi", "gpt2", "padding", {"position": "alibi"}),
    ("llama_longformer", "llama", "punctuation", {"mask": {"preset": "longformer", "window": 3}}),
    ("bert_mlm_lens", "bert_mlm", "punctuation", None),
]


def load(model):
    folder = os.path.join(MODELS, model)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    return folder, cfg, S.load_folder_f64(folder)


def golden_case(model, name):
    g = json.load(open(os.path.join(MODELS, model, "golden.json")))
    return next(c for c in g["cases"] if c["name"] == name)


def t(x):
    return torch.from_numpy(np.asarray(x, dtype=np.float64))


def hidden_states(cfg, W, c):
    mt = cfg["model_type"]
    if mt == "gpt2":
        p = "transformer." if any(k.startswith("transformer.") for k in W) else ""
        return M.gpt2_forward(W, cfg, c["ids"], c["attention_mask"], prefix=p)["hidden_states"]
    if mt == "llama":
        return M.llama_forward(W, cfg, c["ids"], c["attention_mask"])["hidden_states"]
    p = "bert." if any(k.startswith("bert.") for k in W) else ""
    return M.bert_forward(W, cfg, c["ids"], c["attention_mask"], c["token_type_ids"],
                          prefix=p)["hidden_states"]


def final_norm(cfg, W, h):
    """The final norm a pre-norm model applies before its head; BERT has none."""
    mt = cfg["model_type"]
    if mt == "gpt2":
        p = "transformer." if any(k.startswith("transformer.") for k in W) else ""
        return F.layer_norm(h, h.shape[-1:], t(W[p + "ln_f.weight"]), t(W[p + "ln_f.bias"]),
                            cfg["layer_norm_epsilon"])
    if mt == "llama":
        eps = cfg["rms_norm_eps"]
        return h / torch.sqrt((h * h).mean(-1, keepdim=True) + eps) * t(W["model.norm.weight"])
    return h


def lm_head(cfg, W, h):
    """GPT2LMHeadModel / LlamaForCausalLM / BertForMaskedLM heads on a final hidden state."""
    mt = cfg["model_type"]
    if mt == "gpt2":
        p = "transformer." if any(k.startswith("transformer.") for k in W) else ""
        return h @ t(W[p + "wte.weight"]).T
    if mt == "llama":
        return h @ t(W["lm_head.weight"]).T
    c = "cls.predictions."
    x = F.linear(h, t(W[c + "transform.dense.weight"]), t(W[c + "transform.dense.bias"]))
    x = F.gelu(x)  # hidden_act "gelu": the erf form
    x = F.layer_norm(x, x.shape[-1:], t(W[c + "transform.LayerNorm.weight"]),
                     t(W[c + "transform.LayerNorm.bias"]), cfg["layer_norm_eps"])
    return x @ t(W["bert.embeddings.word_embeddings.weight"]).T + t(W[c + "bias"])


def lens(cfg, W, c):
    hs = t(hidden_states(cfg, W, c))
    rows = [lm_head(cfg, W, final_norm(cfg, W, h)) for h in hs[:-1]] + [lm_head(cfg, W, hs[-1])]
    logits = torch.stack(rows)                                  # [L+1, T, V]
    logp = torch.log_softmax(logits, -1)
    top = logits.argmax(-1)
    final_top = top[-1]
    target = logits.gather(-1, final_top[None, :, None].expand(len(rows), -1, 1))
    return {
        "logits": (logits[-1].numpy().astype(np.float32), "F32"),
        "lens_top": (top.numpy().astype(np.int64), "I64"),
        "lens_probability": (logp.max(-1).values.exp().numpy().astype(np.float32), "F32"),
        "lens_entropy": ((-(logp.exp() * logp).sum(-1)).numpy().astype(np.float32), "F32"),
        "lens_rank": ((logits > target).sum(-1).numpy().astype(np.int64), "I64"),
    }


def effect(folder, cfg, W, c, spec):
    mask = c["attention_mask"]
    valid = torch.tensor(mask, dtype=torch.bool)
    att_e, last_e, _ = R.forward(folder, c["ids"], {}, mask)
    att_v, last_v, _ = R.forward(folder, c["ids"], spec, mask)
    p, q = lm_head(cfg, W, last_e), lm_head(cfg, W, last_v)
    lp, lq = torch.log_softmax(p, -1), torch.log_softmax(q, -1)
    kl = (lp.exp() * (lp - lq)).sum(-1) * valid
    top_p = torch.topk(p, TOP_K, -1).indices
    top_q = torch.topk(q, TOP_K, -1).indices
    flips = torch.tensor([sum(int(i not in set(b.tolist())) for i in a.tolist())
                          for a, b in zip(top_p, top_q)]) * valid
    m = 0.5 * (att_e + att_v)
    xlog = lambda a, b: torch.where(a > 0, a * torch.log2(torch.where(a > 0, a, 1.0) /  # noqa: E731
                                                          torch.where(b > 0, b, 1.0)), 0.0)
    jsd = 0.5 * xlog(att_e, m).sum(-1) + 0.5 * xlog(att_v, m).sum(-1)   # [L, H, T]
    head_jsd = (jsd * valid).sum(-1) / valid.sum()
    d = ((last_v - last_e)[valid] ** 2).sum().sqrt() / (last_e[valid] ** 2).sum().sqrt()
    return {
        "kl": (kl.numpy().astype(np.float32), "F32"),
        "exact_top": (p.argmax(-1).numpy().astype(np.int64), "I64"),
        "variant_top": (q.argmax(-1).numpy().astype(np.int64), "I64"),
        "topk_flips": (flips.numpy().astype(np.int64), "I64"),
        "head_jsd": (head_jsd.numpy().astype(np.float32), "F32"),
        "hidden_change_last": (np.array([float(d)], dtype=np.float32), "F32"),
    }


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    cases = []
    for name, model, case, spec in CASES:
        folder, cfg, W = load(model)
        c = golden_case(model, case)
        tensors = lens(cfg, W, c)
        if spec is not None:
            tensors.update(effect(folder, cfg, W, c, spec))
            # the two references (numpy models_ref, torch variant_reference) agree on the exact pass
            _, last, _ = R.forward(folder, c["ids"], {}, c["attention_mask"])
            assert np.allclose(lm_head(cfg, W, last).numpy(), tensors["logits"][0], atol=1e-5)
        S.save(os.path.join(OUT, name + ".safetensors"), tensors, {"case": name})
        cases.append({"name": name, "model": model, "ids": c["ids"],
                      "attention_mask": c["attention_mask"],
                      "token_type_ids": c["token_type_ids"], "spec": spec, "k": TOP_K,
                      "tensors": sorted(tensors)})
        mean_kl = float(tensors["kl"][0].mean()) if "kl" in tensors else 0.0
        print(f"{name}: T = {len(c['ids'])}, lens rows {tensors['lens_top'][0].shape[0]}, "
              f"mean KL {mean_kl:.4f}")
    with open(os.path.join(OUT, "golden.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps({"generator": "tools/golden/make_output_goldens.py", "cases": cases},
                           indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
