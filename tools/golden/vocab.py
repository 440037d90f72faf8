"""Deterministic vocabularies built from corpus.CORPUS.

  * build_wordpiece(lowercase): BERT vocab.txt entries.
  * train_byte_bpe(n_merges): byte-level BPE merges (GPT-2 pre-split, bytes_to_unicode).
  * train_spiece_bpe(n_merges): Llama-style "▁" BPE over characters; rare characters stay out
    of the alphabet so that byte fallback is exercised.

All ties are broken lexicographically, so the output only depends on the corpus.
"""
from collections import Counter

import regex

import tokenizers_ref as T
from corpus import CORPUS

WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_wordpiece(lowercase):
    """Specials, single chars seen >= 2 times, their ## forms, words seen >= 2 times, and
    frequent word-initial / ##word-final pieces of 2-4 chars."""
    basic = T.WordPieceTokenizer({}, do_lower_case=lowercase)
    words = ["".join(c for c, _ in w) for w in basic._words(CORPUS)]
    wc = Counter(words)
    chars = Counter(c for w in words for c in w)
    inner = Counter(c for w in words for c in w[1:])
    alphabet = sorted(c for c, n in chars.items() if n >= 2)
    vocab = list(WORDPIECE_SPECIALS)
    vocab += alphabet
    vocab += ["##" + c for c in alphabet if inner[c] >= 1]
    whole = sorted((w for w, n in wc.items() if n >= 2 and len(w) >= 2),
                   key=lambda w: (-wc[w], w))
    vocab += whole
    pre, suf = Counter(), Counter()
    for w, n in wc.items():
        if len(w) >= 4 and all(ch in alphabet for ch in w):
            for k in range(2, 5):
                if k < len(w):
                    pre[w[:k]] += n
                    suf["##" + w[-k:]] += n
    vocab += sorted((p for p, n in pre.items() if n >= 3), key=lambda p: (-pre[p], p))
    vocab += sorted((s for s, n in suf.items() if n >= 3), key=lambda s: (-suf[s], s))
    seen, out = set(), []
    for t in vocab:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def _train_bpe(word_counts, n_merges, mergeable):
    """Classic BPE training. word_counts: {tuple(symbols): count}.  mergeable(sym) says if a
    symbol may take part in a merge.  Returns the merge list [(a, b), ...]."""
    words = {w: c for w, c in word_counts.items()}
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                if mergeable(a) and mergeable(b):
                    pairs[(a, b)] += c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        merges.append(best)
        new = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + c
        words = new
    return merges


def train_byte_bpe(n_merges=420):
    """-> (base symbols in GPT-2 order, merges)."""
    counts = Counter()
    for m in regex.finditer(T.GPT2_PATTERN, CORPUS):
        counts[tuple(T.BYTE_ENCODER[b] for b in m.group().encode("utf-8"))] += 1
    merges = _train_bpe(counts, n_merges, lambda s: True)
    base = [T.BYTE_ENCODER[b] for b in T.BYTE_ORDER]
    return base, merges


def merged_tokens(merges):
    seen, out = set(), []
    for a, b in merges:
        if a + b not in seen:
            seen.add(a + b)
            out.append(a + b)
    return out


def train_spiece_bpe(n_merges=380, min_char_count=2):
    """-> (alphabet, merges).  Words are "▁"-prefixed whitespace-separated corpus words (what
    SentencePiece sees); characters seen fewer than min_char_count times are left out of the
    alphabet, never merged, and fall back to <0xNN> tokens at encoding time."""
    words = Counter(T.SPIECE + w for w in CORPUS.split())
    chars = Counter()
    for w, c in words.items():
        for ch in w:
            chars[ch] += c
    alphabet = sorted((ch for ch, n in chars.items() if n >= min_char_count),
                      key=lambda ch: (-chars[ch], ch))
    alpha = set(alphabet)
    merges = _train_bpe({tuple(w): c for w, c in words.items()}, n_merges,
                        lambda s: len(s) > 1 or s in alpha)
    return alphabet, merges
