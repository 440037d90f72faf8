"""The tiny checkpoints: HF config.json, tensors in HF state_dict layout, tokenizer files.

Each builder returns a Model record: folder name, config dict, {tensor name: float32 array as
stored (already rounded to the stored dtype)}, stored dtype, tokenizer object, forward
function, shard plan and the tokenizer files to write.
"""
import json
from dataclasses import dataclass, field

import numpy as np

import models_ref as M
import tokenizers_ref as T
import vocab as V
from safetensors_io import round_to_dtype

TRANSFORMERS_VERSION = "4.46.3"
DTYPE_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


@dataclass
class Model:
    name: str
    config: dict
    tensors: dict           # name -> float32 ndarray (values exactly as stored)
    dtype: str              # "F32" | "F16" | "BF16"
    tokenizer: object
    forward: object         # (tensors_f64, config, ids, mask, type_ids) -> dict
    files: dict = field(default_factory=dict)   # extra files: name -> str contents
    shards: list = None     # None = single model.safetensors, else list of lists of names
    pad_id: int = 0
    family: str = ""        # "wordpiece" | "roberta" | "bytelevel" | "llama"


# ------------------------------------------------------------------------------------------
# random weights
# ------------------------------------------------------------------------------------------

QK_STD = 0.3


def _std(name):
    """Standard deviation by role: large enough for peaked attention, norms near 1."""
    n = name
    if any(k in n for k in ("query.", "key.", "q_lin", "k_lin", "q_proj", "k_proj", "c_attn")):
        return QK_STD
    if any(k in n for k in ("embeddings", "wte", "wpe", "embed_tokens", "embed_positions")):
        return 0.4
    if any(k in n for k in ("o_proj", "down_proj", "c_proj", "out_lin", "lin2", "output.dense",
                            "out_proj", "fc2")):
        return 0.1  # projections back into the residual stream: keep |hidden| moderate
    if any(k in n for k in ("gate_proj", "up_proj")):
        return 0.2
    return 0.25


def _is_norm(name):
    return any(k in name for k in ("LayerNorm", "layer_norm", "layernorm", "ln_1", "ln_2", "ln_f",
                                   "model.norm", "q_norm", "k_norm"))


def make_tensors(seed, shapes, dtype):
    """shapes: ordered list of (name, shape).  Norm weights 1 + N(0, 0.1), norm biases
    N(0, 0.05), other biases N(0, 0.1), weights N(0, std(name))."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in shapes:
        z = rng.standard_normal(shape)
        if _is_norm(name):
            v = 1.0 + 0.1 * z if name.endswith("weight") else 0.05 * z
        elif name.endswith("bias"):
            v = 0.1 * z
        else:
            v = _std(name) * z
        out[name] = round_to_dtype(v.astype(np.float32), dtype)
    return out


def _cfg(d, dtype):
    d = dict(d)
    d["torch_dtype"] = DTYPE_NAME[dtype]
    d["transformers_version"] = TRANSFORMERS_VERSION
    return d


def dumps_config(cfg):
    """PretrainedConfig.to_json_string: indent 2, sorted keys, trailing newline."""
    return json.dumps(cfg, indent=2, sort_keys=True) + "\n"


# ------------------------------------------------------------------------------------------
# tokenizer files
# ------------------------------------------------------------------------------------------

def wordpiece_files(tokens, do_lower_case, tokenizer_class, max_len):
    specials = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                "cls_token": "[CLS]", "mask_token": "[MASK]"}
    cfg = dict(specials, do_lower_case=do_lower_case, tokenize_chinese_chars=True,
               strip_accents=None, model_max_length=max_len, tokenizer_class=tokenizer_class,
               clean_up_tokenization_spaces=True)
    return {"vocab.txt": "".join(t + "\n" for t in tokens),
            "tokenizer_config.json": json.dumps(cfg, indent=2, ensure_ascii=False) + "\n",
            "special_tokens_map.json": json.dumps(specials, indent=2) + "\n"}


def bpe_vocab_files(vocab, merges, tok_cfg):
    """GPT2Tokenizer.save_vocabulary: vocab.json (indent 2, sorted keys, UTF-8) and merges.txt
    with the "#version: 0.2" header."""
    return {"vocab.json": json.dumps(vocab, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
            "merges.txt": "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges),
            "tokenizer_config.json": json.dumps(tok_cfg, indent=2, ensure_ascii=False) + "\n"}


def _added(i, content):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def llama_tokenizer_files(vocab, merges):
    tj = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [_added(0, "<unk>"), _added(1, "<s>"), _added(2, "</s>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }
    decoder = {str(i): {k: v for k, v in _added(i, c).items() if k != "id"}
               for i, c in enumerate(["<unk>", "<s>", "</s>"])}
    tc = {"add_bos_token": True, "add_eos_token": False, "added_tokens_decoder": decoder,
          "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": None,
          "clean_up_tokenization_spaces": False, "legacy": False, "model_max_length": 512,
          "sp_model_kwargs": {}, "tokenizer_class": "LlamaTokenizer"}
    return {"tokenizer.json": json.dumps(tj, indent=2, ensure_ascii=False) + "\n",
            "tokenizer_config.json": json.dumps(tc, indent=2, ensure_ascii=False) + "\n"}


def qwen2_tokenizer_files(vocab, merges, specials):
    bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    tj = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [_added(i, c) for c, i in specials.items()],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": T.QWEN2_PATTERN}, "behavior": "Isolated",
             "invert": False}, bl]},
        "post_processor": dict(bl),
        "decoder": dict(bl),
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }
    decoder = {str(i): {k: v for k, v in _added(i, c).items() if k != "id"}
               for c, i in specials.items()}
    tc = {"add_prefix_space": False, "added_tokens_decoder": decoder, "bos_token": None,
          "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "unk_token": None,
          "clean_up_tokenization_spaces": False, "errors": "replace", "model_max_length": 512,
          "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer"}
    return {"tokenizer.json": json.dumps(tj, indent=2, ensure_ascii=False) + "\n",
            "tokenizer_config.json": json.dumps(tc, indent=2, ensure_ascii=False) + "\n"}


# ------------------------------------------------------------------------------------------
# vocabularies (built once)
# ------------------------------------------------------------------------------------------

class Vocabs:
    def __init__(self):
        self.wp_uncased = V.build_wordpiece(True)
        self.wp_cased = V.build_wordpiece(False)
        base, self.byte_merges = V.train_byte_bpe()
        self.byte_tokens = base + V.merged_tokens(self.byte_merges)
        alphabet, self.sp_merges = V.train_spiece_bpe()
        sp = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + alphabet
        sp += [t for t in V.merged_tokens(self.sp_merges) if t not in set(sp)]
        self.sp_tokens = sp


def _ids(tokens):
    return {t: i for i, t in enumerate(tokens)}


# ------------------------------------------------------------------------------------------
# BERT-family
# ------------------------------------------------------------------------------------------

def bert_shapes(prefix, V_, D, L, I, P, TV, pooler, mlm):
    s = [(prefix + "embeddings.word_embeddings.weight", (V_, D)),
         (prefix + "embeddings.position_embeddings.weight", (P, D)),
         (prefix + "embeddings.token_type_embeddings.weight", (TV, D)),
         (prefix + "embeddings.LayerNorm.weight", (D,)),
         (prefix + "embeddings.LayerNorm.bias", (D,))]
    for i in range(L):
        p = f"{prefix}encoder.layer.{i}."
        for k in ("query", "key", "value"):
            s += [(p + f"attention.self.{k}.weight", (D, D)), (p + f"attention.self.{k}.bias", (D,))]
        s += [(p + "attention.output.dense.weight", (D, D)), (p + "attention.output.dense.bias", (D,)),
              (p + "attention.output.LayerNorm.weight", (D,)), (p + "attention.output.LayerNorm.bias", (D,)),
              (p + "intermediate.dense.weight", (I, D)), (p + "intermediate.dense.bias", (I,)),
              (p + "output.dense.weight", (D, I)), (p + "output.dense.bias", (D,)),
              (p + "output.LayerNorm.weight", (D,)), (p + "output.LayerNorm.bias", (D,))]
    if pooler:
        s += [(prefix + "pooler.dense.weight", (D, D)), (prefix + "pooler.dense.bias", (D,))]
    if mlm:  # decoder.weight (tied to word embeddings) and decoder.bias (= predictions.bias)
        s += [("cls.predictions.bias", (V_,)),  # are not stored, as save_pretrained drops ties
              ("cls.predictions.transform.dense.weight", (D, D)),
              ("cls.predictions.transform.dense.bias", (D,)),
              ("cls.predictions.transform.LayerNorm.weight", (D,)),
              ("cls.predictions.transform.LayerNorm.bias", (D,))]
    return s


def build_bert(vocabs, name="bert", cased=False, mlm=False, dtype="F32", seed=1, D=32, L=2, I=64,
               P=512):
    toks = vocabs.wp_cased if cased else vocabs.wp_uncased
    vocab = _ids(toks)
    prefix = "bert." if mlm else ""
    cfg = _cfg({
        "architectures": ["BertForMaskedLM" if mlm else "BertModel"],
        "attention_probs_dropout_prob": 0.1, "classifier_dropout": None, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "hidden_size": D, "initializer_range": 0.02,
        "intermediate_size": I, "layer_norm_eps": 1e-12, "max_position_embeddings": P,
        "model_type": "bert", "num_attention_heads": 4, "num_hidden_layers": L,
        "pad_token_id": 0, "position_embedding_type": "absolute", "type_vocab_size": 2,
        "use_cache": True, "vocab_size": len(toks)}, dtype)
    tensors = make_tensors(seed, bert_shapes(prefix, len(toks), D, L, I, P, 2, not mlm, mlm), dtype)
    tok = T.WordPieceTokenizer(vocab, do_lower_case=not cased)
    fwd = lambda W, c, ids, m, tt: M.bert_forward(W, c, ids, m, tt, prefix=prefix)  # noqa: E731
    return Model(name, cfg, tensors, dtype, tok, fwd,
                 files=wordpiece_files(toks, not cased, "BertTokenizer", P),
                 pad_id=vocab["[PAD]"], family="wordpiece")


def build_roberta(vocabs, seed=3, D=48, L=3, I=96, n=128):
    toks = ["<s>", "<pad>", "</s>", "<unk>"] + vocabs.byte_tokens + ["<mask>"]
    vocab = _ids(toks)
    P = n + 2
    cfg = _cfg({
        "architectures": ["RobertaModel"], "attention_probs_dropout_prob": 0.1,
        "bos_token_id": 0, "classifier_dropout": None, "eos_token_id": 2, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "hidden_size": D, "initializer_range": 0.02,
        "intermediate_size": I, "layer_norm_eps": 1e-05, "max_position_embeddings": P,
        "model_type": "roberta", "num_attention_heads": 4, "num_hidden_layers": L,
        "pad_token_id": 1, "position_embedding_type": "absolute", "type_vocab_size": 1,
        "use_cache": True, "vocab_size": len(toks)}, "F32")
    tensors = make_tensors(seed, bert_shapes("", len(toks), D, L, I, P, 1, True, False), "F32")
    tok = T.ByteLevelBPETokenizer(vocab, vocabs.byte_merges, style="roberta")
    tc = {"add_prefix_space": False, "bos_token": "<s>", "cls_token": "<s>", "eos_token": "</s>",
          "errors": "replace", "mask_token": "<mask>", "model_max_length": n, "pad_token": "<pad>",
          "sep_token": "</s>", "trim_offsets": True, "unk_token": "<unk>",
          "tokenizer_class": "RobertaTokenizer"}
    fwd = lambda W, c, ids, m, tt: M.bert_forward(W, c, ids, m, tt)  # noqa: E731
    return Model("roberta", cfg, tensors, "F32", tok, fwd,
                 files=bpe_vocab_files(vocab, vocabs.byte_merges, tc), pad_id=1, family="roberta")


def build_distilbert(vocabs, seed=4, D=32, L=3, I=64, P=512):
    toks = vocabs.wp_uncased
    vocab = _ids(toks)
    cfg = _cfg({
        "activation": "gelu", "architectures": ["DistilBertModel"], "attention_dropout": 0.1,
        "dim": D, "dropout": 0.1, "hidden_dim": I, "initializer_range": 0.02,
        "max_position_embeddings": P, "model_type": "distilbert", "n_heads": 4, "n_layers": L,
        "pad_token_id": 0, "qa_dropout": 0.1, "seq_classif_dropout": 0.2,
        "sinusoidal_pos_embds": False, "tie_weights_": True, "vocab_size": len(toks)}, "F32")
    s = [("embeddings.word_embeddings.weight", (len(toks), D)),
         ("embeddings.position_embeddings.weight", (P, D)),
         ("embeddings.LayerNorm.weight", (D,)), ("embeddings.LayerNorm.bias", (D,))]
    for i in range(L):
        p = f"transformer.layer.{i}."
        for k in ("q_lin", "k_lin", "v_lin", "out_lin"):
            s += [(p + f"attention.{k}.weight", (D, D)), (p + f"attention.{k}.bias", (D,))]
        s += [(p + "sa_layer_norm.weight", (D,)), (p + "sa_layer_norm.bias", (D,)),
              (p + "ffn.lin1.weight", (I, D)), (p + "ffn.lin1.bias", (I,)),
              (p + "ffn.lin2.weight", (D, I)), (p + "ffn.lin2.bias", (D,)),
              (p + "output_layer_norm.weight", (D,)), (p + "output_layer_norm.bias", (D,))]
    tensors = make_tensors(seed, s, "F32")
    tok = T.WordPieceTokenizer(vocab, do_lower_case=True)
    fwd = lambda W, c, ids, m, tt: M.distilbert_forward(W, c, ids, m)  # noqa: E731
    return Model("distilbert", cfg, tensors, "F32", tok, fwd,
                 files=wordpiece_files(toks, True, "DistilBertTokenizer", P),
                 pad_id=vocab["[PAD]"], family="wordpiece")


# ------------------------------------------------------------------------------------------
# GPT-2
# ------------------------------------------------------------------------------------------

def build_gpt2(vocabs, name="gpt2", lm_head=True, dtype="F32", seed=5, D=32, L=2, P=512,
               shard=False):
    toks = vocabs.byte_tokens + ["<|endoftext|>"]
    vocab = _ids(toks)
    eot = vocab["<|endoftext|>"]
    prefix = "transformer." if lm_head else ""
    cfg = _cfg({
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel" if lm_head else "GPT2Model"],
        "attn_pdrop": 0.1, "bos_token_id": eot, "embd_pdrop": 0.1, "eos_token_id": eot,
        "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
        "n_ctx": P, "n_embd": D, "n_head": 4, "n_inner": None, "n_layer": L, "n_positions": P,
        "reorder_and_upcast_attn": False, "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True,
        "summary_activation": None, "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
        "summary_type": "cls_index", "summary_use_proj": True, "use_cache": True,
        "vocab_size": len(toks)}, dtype)
    I = 4 * D  # n_inner null
    s = [(prefix + "wte.weight", (len(toks), D)), (prefix + "wpe.weight", (P, D))]
    for i in range(L):
        p = f"{prefix}h.{i}."
        s += [(p + "ln_1.weight", (D,)), (p + "ln_1.bias", (D,)),
              (p + "attn.c_attn.weight", (D, 3 * D)), (p + "attn.c_attn.bias", (3 * D,)),
              (p + "attn.c_proj.weight", (D, D)), (p + "attn.c_proj.bias", (D,)),
              (p + "ln_2.weight", (D,)), (p + "ln_2.bias", (D,)),
              (p + "mlp.c_fc.weight", (D, I)), (p + "mlp.c_fc.bias", (I,)),
              (p + "mlp.c_proj.weight", (I, D)), (p + "mlp.c_proj.bias", (D,))]
    s += [(prefix + "ln_f.weight", (D,)), (prefix + "ln_f.bias", (D,))]
    tensors = make_tensors(seed, s, dtype)  # lm_head.weight is tied to wte: not stored
    shards = None
    if shard:  # shard 1: embeddings + first layer; shard 2: the rest
        first = [n for n, _ in s if n.startswith(("wte", "wpe", "h.0."))]
        shards = [first, [n for n, _ in s if n not in first]]
    tok = T.ByteLevelBPETokenizer(vocab, vocabs.byte_merges, style="gpt2")
    tc = {"add_bos_token": False, "add_prefix_space": False, "bos_token": "<|endoftext|>",
          "eos_token": "<|endoftext|>", "errors": "replace", "model_max_length": P,
          "pad_token": None, "unk_token": "<|endoftext|>", "tokenizer_class": "GPT2Tokenizer"}
    fwd = lambda W, c, ids, m, tt: M.gpt2_forward(W, c, ids, m, prefix=prefix)  # noqa: E731
    return Model(name, cfg, tensors, dtype, tok, fwd,
                 files=bpe_vocab_files(vocab, vocabs.byte_merges, tc), shards=shards,
                 pad_id=eot, family="bytelevel")


# ------------------------------------------------------------------------------------------
# Llama family
# ------------------------------------------------------------------------------------------

def llama_shapes(V_, D, L, I, H, KV, d, qkv_bias, lm_head, qk_norm=False):
    s = [("model.embed_tokens.weight", (V_, D))]
    for i in range(L):
        p = f"model.layers.{i}."
        s += [(p + "input_layernorm.weight", (D,)),
              (p + "self_attn.q_proj.weight", (H * d, D)), (p + "self_attn.k_proj.weight", (KV * d, D)),
              (p + "self_attn.v_proj.weight", (KV * d, D))]
        if qkv_bias:
            s += [(p + "self_attn.q_proj.bias", (H * d,)), (p + "self_attn.k_proj.bias", (KV * d,)),
                  (p + "self_attn.v_proj.bias", (KV * d,))]
        if qk_norm:
            s += [(p + "self_attn.q_norm.weight", (d,)), (p + "self_attn.k_norm.weight", (d,))]
        s += [(p + "self_attn.o_proj.weight", (D, H * d)),
              (p + "post_attention_layernorm.weight", (D,)),
              (p + "mlp.gate_proj.weight", (I, D)), (p + "mlp.up_proj.weight", (I, D)),
              (p + "mlp.down_proj.weight", (D, I))]
    s += [("model.norm.weight", (D,))]
    if lm_head:
        s += [("lm_head.weight", (V_, D))]
    return s


def build_llama(vocabs, name="llama", seed=7, D=32, L=2, I=96, window=None):
    toks = vocabs.sp_tokens
    vocab = _ids(toks)
    H, KV = 4, 2
    d = D // H
    common = {"attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "head_dim": d,
              "hidden_act": "silu", "hidden_size": D, "initializer_range": 0.02,
              "intermediate_size": I, "max_position_embeddings": 512, "num_attention_heads": H,
              "num_hidden_layers": L, "num_key_value_heads": KV, "rope_theta": 10000.0,
              "tie_word_embeddings": False, "use_cache": True, "vocab_size": len(toks)}
    if name == "mistral":
        cfg = dict(common, architectures=["MistralForCausalLM"], model_type="mistral",
                   rms_norm_eps=1e-05, sliding_window=window)
    else:
        cfg = dict(common, architectures=["LlamaForCausalLM"], model_type="llama",
                   attention_bias=False, mlp_bias=False, pretraining_tp=1, rms_norm_eps=1e-06,
                   rope_scaling=None)
    cfg = _cfg(cfg, "F32")
    tensors = make_tensors(seed, llama_shapes(len(toks), D, L, I, H, KV, d, False, True), "F32")
    tok = T.LlamaBPETokenizer(vocab, vocabs.sp_merges)
    fwd = lambda W, c, ids, m, tt: M.llama_forward(W, c, ids, m)  # noqa: E731
    return Model(name, cfg, tensors, "F32", tok, fwd,
                 files=llama_tokenizer_files(vocab, vocabs.sp_merges), pad_id=2, family="llama")


def build_qwen2(vocabs, seed=8, D=48, L=3, I=128):
    base = vocabs.byte_tokens
    vocab = _ids(base)
    specials = {"<|endoftext|>": len(base), "<|im_start|>": len(base) + 1, "<|im_end|>": len(base) + 2}
    full = dict(vocab, **specials)
    n_vocab = -(-(len(base) + 3) // 64) * 64  # embedding rows padded past the tokenizer, as Qwen2
    H, KV = 4, 2
    d = D // H
    eot = specials["<|endoftext|>"]
    cfg = _cfg({
        "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": eot,
        "eos_token_id": eot, "hidden_act": "silu", "hidden_size": D, "initializer_range": 0.02,
        "intermediate_size": I, "max_position_embeddings": 512, "max_window_layers": L,
        "model_type": "qwen2", "num_attention_heads": H, "num_hidden_layers": L,
        "num_key_value_heads": KV, "rms_norm_eps": 1e-06, "rope_scaling": None,
        "rope_theta": 1000000.0, "sliding_window": 4, "tie_word_embeddings": True,
        "use_cache": True, "use_sliding_window": False, "vocab_size": n_vocab}, "F32")
    tensors = make_tensors(seed, llama_shapes(n_vocab, D, L, I, H, KV, d, True, False), "F32")
    tok = T.ByteLevelBPETokenizer(full, vocabs.byte_merges, pattern=T.QWEN2_PATTERN,
                                  style="qwen2", nfc=True)
    fwd = lambda W, c, ids, m, tt: M.llama_forward(W, c, ids, m)  # noqa: E731
    return Model("qwen2", cfg, tensors, "F32", tok, fwd,
                 files=qwen2_tokenizer_files(vocab, vocabs.byte_merges, specials), pad_id=eot,
                 family="bytelevel")


def build_qwen3(vocabs, seed=10, D=32, L=2, I=64):
    """Qwen3: q_norm / k_norm per head, head_dim 16 with hidden 32 and 4 heads (q is wider than
    the residual stream, as in Qwen3-0.6B), tied embeddings, the Qwen2 tokenizer."""
    base = vocabs.byte_tokens
    vocab = _ids(base)
    specials = {"<|endoftext|>": len(base), "<|im_start|>": len(base) + 1, "<|im_end|>": len(base) + 2}
    full = dict(vocab, **specials)
    n_vocab = -(-(len(base) + 3) // 64) * 64
    H, KV, d = 4, 2, 16
    eot = specials["<|endoftext|>"]
    cfg = _cfg({
        "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": eot, "eos_token_id": eot, "head_dim": d, "hidden_act": "silu",
        "hidden_size": D, "initializer_range": 0.02, "intermediate_size": I,
        "max_position_embeddings": 512, "max_window_layers": L, "model_type": "qwen3",
        "num_attention_heads": H, "num_hidden_layers": L, "num_key_value_heads": KV,
        "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000.0,
        "sliding_window": None, "tie_word_embeddings": True, "use_cache": True,
        "use_sliding_window": False, "vocab_size": n_vocab}, "F32")
    tensors = make_tensors(seed, llama_shapes(n_vocab, D, L, I, H, KV, d, False, False, True), "F32")
    tok = T.ByteLevelBPETokenizer(full, vocabs.byte_merges, pattern=T.QWEN2_PATTERN,
                                  style="qwen2", nfc=True)
    fwd = lambda W, c, ids, m, tt: M.llama_forward(W, c, ids, m)  # noqa: E731
    return Model("qwen3", cfg, tensors, "F32", tok, fwd,
                 files=qwen2_tokenizer_files(vocab, vocabs.byte_merges, specials), pad_id=eot,
                 family="bytelevel")


# ------------------------------------------------------------------------------------------
# Gemma 2 / Gemma 3 text
# ------------------------------------------------------------------------------------------

def gemma_shapes(V_, D, L, I, H, KV, d, qk_norm):
    s = [("model.embed_tokens.weight", (V_, D))]
    for i in range(L):
        p = f"model.layers.{i}."
        s += [(p + "input_layernorm.weight", (D,)),
              (p + "self_attn.q_proj.weight", (H * d, D)), (p + "self_attn.k_proj.weight", (KV * d, D)),
              (p + "self_attn.v_proj.weight", (KV * d, D)), (p + "self_attn.o_proj.weight", (D, H * d))]
        if qk_norm:
            s += [(p + "self_attn.q_norm.weight", (d,)), (p + "self_attn.k_norm.weight", (d,))]
        s += [(p + "post_attention_layernorm.weight", (D,)),
              (p + "pre_feedforward_layernorm.weight", (D,)),
              (p + "post_feedforward_layernorm.weight", (D,)),
              (p + "mlp.gate_proj.weight", (I, D)), (p + "mlp.up_proj.weight", (I, D)),
              (p + "mlp.down_proj.weight", (D, I))]
    return s + [("model.norm.weight", (D,))]


def build_gemma(vocabs, name, seed, L, extra):
    """Gemma 2 or Gemma 3 text: four (1 + w) RMSNorms per layer (their weights stored near 0, as
    Gemma's zero-initialised norms are), head_dim 16 with hidden 32 and 4 heads, a window of 4
    so that the windowed layers differ from the global ones, query_pre_attn_scalar 20 (not
    head_dim), tied embeddings (lm_head not stored), the Llama tokenizer."""
    toks = vocabs.sp_tokens
    D, H, KV, d, I = 32, 4, 2, 16, 64
    gemma3 = name == "gemma3"
    cfg = _cfg(dict({
        "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
        "head_dim": d, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": D,
        "initializer_range": 0.02, "intermediate_size": I, "max_position_embeddings": 512,
        "num_attention_heads": H, "num_hidden_layers": L, "num_key_value_heads": KV,
        "pad_token_id": 0, "query_pre_attn_scalar": 20, "rms_norm_eps": 1e-06,
        "sliding_window": 4, "tie_word_embeddings": True, "use_cache": True,
        "vocab_size": len(toks)}, **extra), "F32")
    if gemma3:
        cfg["transformers_version"] = "4.50.0"  # Gemma 3 arrived in transformers 4.50
    tensors = make_tensors(seed, gemma_shapes(len(toks), D, L, I, H, KV, d, gemma3), "F32")
    for n in tensors:
        if _is_norm(n):
            tensors[n] = round_to_dtype(tensors[n] - np.float32(1.0), "F32")
    tok = T.LlamaBPETokenizer(_ids(toks), vocabs.sp_merges)
    fwd = lambda W, c, ids, m, tt: M.gemma_forward(W, c, ids, m)  # noqa: E731
    return Model(name, cfg, tensors, "F32", tok, fwd,
                 files=llama_tokenizer_files(_ids(toks), vocabs.sp_merges), pad_id=0,
                 family="llama")


def build_gemma2(vocabs):
    """Gemma 2: even layers windowed; soft-capping at 5 (scores) and 3 (logits), far below the
    real 50 and 30, so that the caps change these small models' numbers."""
    return build_gemma(vocabs, "gemma2", 13, 4, {
        "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "rope_theta": 10000.0,
        "attn_logit_softcapping": 5.0, "final_logit_softcapping": 3.0,
        "cache_implementation": "hybrid"})


def build_gemma3(vocabs):
    """Gemma 3 text: q_norm / k_norm, every third layer global (sliding_window_pattern 3), the
    windowed layers on rope_local_base_freq 10000 and the global ones on rope_theta 1e6, no
    soft-capping (null, as Gemma 3's configs write it)."""
    return build_gemma(vocabs, "gemma3", 14, 3, {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
        "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rope_scaling": None,
        "sliding_window_pattern": 3, "attn_logit_softcapping": None,
        "final_logit_softcapping": None, "cache_implementation": "hybrid"})


# ------------------------------------------------------------------------------------------
# OPT
# ------------------------------------------------------------------------------------------

def build_opt(vocabs, name="opt", pre=True, seed=11, D=32, L=2, I=64, P=512):
    """OPT: the GPT-2 byte-level vocabulary behind <s> <pad> </s> <unk> (as facebook/opt-*),
    learned positions with 2 extra rows, ReLU; pre=False is the post-LN wiring of opt-350m
    (do_layer_norm_before false, no final LayerNorm)."""
    toks = ["<s>", "<pad>", "</s>", "<unk>"] + vocabs.byte_tokens
    vocab = _ids(toks)
    cfg = _cfg({
        "_remove_final_layer_norm": False, "activation_dropout": 0.0,
        "activation_function": "relu", "architectures": ["OPTForCausalLM"],
        "attention_dropout": 0.0, "bos_token_id": 2, "do_layer_norm_before": pre, "dropout": 0.1,
        "enable_bias": True, "eos_token_id": 2, "ffn_dim": I, "hidden_size": D,
        "init_std": 0.02, "layer_norm_elementwise_affine": True, "layerdrop": 0.0,
        "max_position_embeddings": P, "model_type": "opt", "num_attention_heads": 4,
        "num_hidden_layers": L, "pad_token_id": 1, "use_cache": True, "vocab_size": len(toks),
        "word_embed_proj_dim": D}, "F32")
    p = "model.decoder."
    s = [(p + "embed_tokens.weight", (len(toks), D)), (p + "embed_positions.weight", (P + 2, D))]
    for i in range(L):
        q = f"{p}layers.{i}."
        for k in ("q_proj", "k_proj", "v_proj", "out_proj"):
            s += [(q + f"self_attn.{k}.weight", (D, D)), (q + f"self_attn.{k}.bias", (D,))]
        s += [(q + "self_attn_layer_norm.weight", (D,)), (q + "self_attn_layer_norm.bias", (D,)),
              (q + "fc1.weight", (I, D)), (q + "fc1.bias", (I,)),
              (q + "fc2.weight", (D, I)), (q + "fc2.bias", (D,)),
              (q + "final_layer_norm.weight", (D,)), (q + "final_layer_norm.bias", (D,))]
    if pre:
        s += [(p + "final_layer_norm.weight", (D,)), (p + "final_layer_norm.bias", (D,))]
    tensors = make_tensors(seed, s, "F32")  # lm_head.weight is tied to embed_tokens: not stored
    tok = T.ByteLevelBPETokenizer(vocab, vocabs.byte_merges, style="opt")
    tc = {"add_bos_token": True, "add_prefix_space": False, "bos_token": "</s>",
          "eos_token": "</s>", "errors": "replace", "model_max_length": P,
          "pad_token": "<pad>", "unk_token": "</s>", "tokenizer_class": "GPT2Tokenizer"}
    fwd = lambda W, c, ids, m, tt: M.opt_forward(W, c, ids, m)  # noqa: E731
    return Model(name, cfg, tensors, "F32", tok, fwd,
                 files=bpe_vocab_files(vocab, vocabs.byte_merges, tc), pad_id=1,
                 family="bytelevel")


def build_all():
    v = Vocabs()
    return [
        build_bert(v),
        build_bert(v, name="bert_mlm", cased=True, mlm=True, dtype="F16", seed=2, L=3),
        build_roberta(v),
        build_distilbert(v),
        build_gpt2(v),
        build_gpt2(v, name="gpt2_plain", lm_head=False, dtype="BF16", seed=6, L=3, shard=True),
        build_llama(v),
        build_qwen2(v),
        build_llama(v, name="mistral", seed=9, L=3, window=4),
        build_qwen3(v),
        build_opt(v),
        build_opt(v, name="opt_post_ln", pre=False, seed=12),
        build_gemma2(v),
        build_gemma3(v),
    ]
