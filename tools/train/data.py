"""Deterministic data for the zoo: the English corpus and the synthetic tasks.

Every sample is plain text, encoded byte by byte (byte_tokenizer.py), so that the GUI example of
a model is something a user can type.  A synthetic sample is `prompt` + `answer`; the loss (and
the accuracy) counts only the answer's bytes.  Batches come from numpy RandomState(seed), so a
seed fixes the data exactly.

English: the Jargon File 4.4.7 (Debian package jargon-text, /usr/share/doc/jargon-text/
jargon.txt.gz, public domain), its lexicon and appendices, reduced to ASCII; every 20th block of
2 KB is held out.
"""
import gzip
import unicodedata

import numpy as np
import torch

import byte_tokenizer as B

CORPUS = "/usr/share/doc/jargon-text/jargon.txt.gz"
BLOCK, HELD_OUT_EVERY = 2048, 20
ASCII = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2014": "--", "\u2013": "-",
         "\u2026": "...", "\u00a0": " "}


def english_text(path=CORPUS):
    """The lexicon entries and appendices A-C as paragraphs of ASCII prose, one per line."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("   :"))  # the first entry
    end = next(i for i, l in enumerate(lines) if l == "Bibliography")
    paragraphs, current = [], []
    for line in lines[start:end] + [""]:
        if any(c in line for c in "\u2500\u2502\u250c\u2510\u2514\u2518\u251c\u2524"):
            continue  # box-drawing tables
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    text = "\n".join(paragraphs)
    for k, v in ASCII.items():
        text = text.replace(k, v)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return text.replace("[", "(").replace("]", ")")  # no accidental [SEP]-like specials


class English:
    """Random windows of T bytes from the training blocks (T − 1 predictions each); fixed held-out
    windows."""

    def __init__(self, T):
        data = np.frombuffer(english_text().encode("ascii"), dtype=np.uint8)
        blocks = [data[i:i + BLOCK] for i in range(0, len(data), BLOCK)]
        self.train = np.concatenate([b for i, b in enumerate(blocks) if i % HELD_OUT_EVERY != 7])
        self.held = np.concatenate([b for i, b in enumerate(blocks) if i % HELD_OUT_EVERY == 7])
        self.T = T

    def batch(self, rng, size):
        starts = rng.randint(0, len(self.train) - self.T, size)
        x = torch.tensor(np.stack([self.train[s:s + self.T] for s in starts]).astype(np.int64))
        return x, torch.ones(size, self.T - 1, dtype=torch.bool)

    def held_out(self, count=128, T=None):
        """`count` evenly spaced held-out windows (all of them ids and a loss mask)."""
        T = T or self.T
        starts = np.linspace(0, len(self.held) - T - 1, count).astype(int)
        x = torch.tensor(np.stack([self.held[s:s + T] for s in starts]).astype(np.int64))
        return x, torch.ones(count, T - 1, dtype=torch.bool)


class MaskedEnglish(English):
    """Masked-byte modelling for encoders (BERT's objective, Devlin et al. 2019, on bytes): a
    fraction `rate` of each window's bytes is replaced by [MASK] and predicted from both sides.
    Training windows have random lengths from `low` to T bytes, so that a model whose weights act
    along the sequence (Linformer's E, F) learns every length a user may type; held-out windows are
    T bytes with masks from a fixed seed.  A batch is (ids with [MASK], scored positions, targets)."""

    masked = True

    def __init__(self, T, low, rate):
        super().__init__(T)
        self.low, self.rate = low, rate

    def corrupt(self, rng, x):
        mask = torch.tensor(rng.random_sample(tuple(x.shape)) < self.rate)
        mask[:, 0] |= ~mask.any(-1)  # every window scores at least one byte
        return x.masked_fill(mask, B.MASK), mask, x

    def batch(self, rng, size):
        T = rng.randint(self.low, self.T + 1)
        starts = rng.randint(0, len(self.train) - T, size)
        x = torch.tensor(np.stack([self.train[s:s + T] for s in starts]).astype(np.int64))
        return self.corrupt(rng, x)

    def held_out(self, count=128, T=None):
        x, _ = super().held_out(count, T)
        return self.corrupt(np.random.RandomState(4321), x)


LETTERS = "abcdefghijklmnopqrstuvwxyz"


def copy_sample(rng, n):
    s = "".join(rng.choice(list(LETTERS), n))
    return s + ">", s


def reverse_sample(rng, n):
    s = "".join(rng.choice(list(LETTERS), n))
    return s + ">", s[::-1]


def sort_sample(rng, n):
    s = "".join(rng.choice(list(LETTERS), n))
    return s + ">", "".join(sorted(s))


def recall_sample(rng, n):
    """Multi-query associative recall: n key-value pairs (distinct letters, digits), then the
    keys again in another order, each followed by its value (only the values are scored)."""
    keys = rng.choice(list(LETTERS), n, replace=False)
    values = rng.choice(list("0123456789"), n)
    order = rng.permutation(n)
    prompt = "".join(k + v for k, v in zip(keys, values)) + ">"
    return prompt, [(keys[i], values[i]) for i in order]


def brackets_sample(rng, n):
    """A string of n brackets of two kinds; answer y when balanced. Half the samples are
    balanced by construction, the others one edit away from balanced (so hard negatives): one
    bracket replaced, or two swapped. Why swaps: a replacement always breaks the count of some
    kind, so a model that only counts each kind would pass; a swap keeps the counts ("([)]",
    ")(")."""
    pairs = n // 2
    stack, out = [], []
    for i in range(2 * pairs):
        left = 2 * pairs - i
        if stack and (len(stack) == left or rng.rand() < 0.5):
            out.append(")" if stack.pop() == "(" else "]")
        else:
            c = "([" [rng.randint(2)]
            stack.append(c)
            out.append(c)
    s = "".join(out)
    if rng.rand() < 0.5:
        i, j = sorted(rng.choice(len(s), 2, replace=False))
        if rng.rand() < 0.5:
            s = s[:i] + "()[]".replace(s[i], "")[rng.randint(3)] + s[i + 1:]
        else:
            s = s[:i] + s[j] + s[i + 1:j] + s[i] + s[j + 1:]
    return s + "=", "y" if balanced(s) else "n"


def balanced(s):
    stack = []
    for c in s:
        if c in "([":
            stack.append(c)
        elif not stack or "([".index(stack.pop()) != ")]".index(c):
            return False
    return not stack


def addition_sample(rng, n):
    """a + b with n digits each, every number written least significant digit first (so a
    causal model meets a carry after the digits that cause it); the sum has n + 1 digits."""
    a, b = rng.randint(0, 10 ** n, 2)
    rev = lambda v, w: str(v).zfill(w)[::-1]  # noqa: E731
    return rev(a, n) + "+" + rev(b, n) + "=", rev(a + b, n + 1)


def carries(prompt, n):
    """The carry into each sum digit (LSB first) of an addition prompt."""
    a, b = prompt[:n], prompt[n + 1:2 * n + 1]
    c, out = 0, []
    for i in range(n + 1):
        out.append(c)
        s = (int(a[i]) + int(b[i]) if i < n else 0) + c
        c = s // 10
    return out


TASKS = {"copy": copy_sample, "reverse": reverse_sample, "sort": sort_sample, "recall": recall_sample,
         "brackets": brackets_sample, "addition": addition_sample}


def encode_sample(prompt, answer):
    """-> ids, mask of the scored targets (mask[i] scores the prediction of ids[i + 1])."""
    ids, scored = B.encode(prompt), []
    if isinstance(answer, list):  # recall: (key, value) pairs, only values scored
        for k, v in answer:
            ids += B.encode(k)
            scored.append(len(ids))
            ids += B.encode(v)
    else:
        for c in answer:
            scored.append(len(ids))
            ids += B.encode(c)
    mask = [False] * (len(ids) - 1)
    for i in scored:
        mask[i - 1] = True
    return ids, mask


class Synthetic:
    """Samples of one task with n drawn uniformly from [low, high], padded with [PAD]
    (never scored; the models are causal, so padding at the end changes nothing before it)."""

    def __init__(self, task, low, high):
        self.task, self.low, self.high = task, low, high

    def sample(self, rng, n=None):
        return TASKS[self.task](rng, n or rng.randint(self.low, self.high + 1))

    def batch(self, rng, size, n=None):
        rows = [encode_sample(*self.sample(rng, n)) for _ in range(size)]
        T = max(len(ids) for ids, _ in rows)
        x = torch.full((size, T), B.PAD, dtype=torch.long)
        mask = torch.zeros(size, T - 1, dtype=torch.bool)
        for r, (ids, m) in enumerate(rows):
            x[r, :len(ids)] = torch.tensor(ids)
            mask[r, :len(m)] = torch.tensor(m)
        return x, mask

    def held_out(self, count=512, n=None, seed=12345):
        return self.batch(np.random.RandomState(seed), count, n)
