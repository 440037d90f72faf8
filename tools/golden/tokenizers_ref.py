"""Reference tokenizers reproducing Hugging Face semantics, with HF-style offsets.

Every tokenizer returns an `Encoding`: ids, tokens (as the vocabulary spells them),
type ids, sequence ids (-1 for special tokens, 0 for the text, 1 for the pair) and offsets
[begin, end) in Unicode code points of the text the token came from (the pair's text for
sequence id 1), [0, 0] for special tokens: what HF's fast tokenizers return as
offset_mapping.

Offsets are tracked the way the `tokenizers` library's NormalizedString does it: every
normalized character carries the [begin, end) range of the original character it came from.
A character produced by a normalizer (NFD decomposition, lowercase expansion, the byte-level
mapping of a multi-byte character, a prepended "▁") inherits the range of the original
character it was derived from.  A token's offsets are (first char's begin, last char's end).

Implemented:
  * WordPiece (BERT / DistilBERT): BertTokenizer's BasicTokenizer + WordpieceTokenizer
    (transformers/models/bert/tokenization_bert.py), equal to the fast tokenizer's
    BertNormalizer + BertPreTokenizer + WordPiece + BertProcessing.
  * Byte-level BPE (GPT-2, RoBERTa, Qwen2): regex pre-split (GPT-2's pattern, or Qwen2's
    Split pattern), bytes_to_unicode, BPE by merge rank (tokenization_gpt2.py; tokenizers'
    ByteLevel pre-tokenizer and models/bpe).  RoBERTa adds <s> A </s> (</s> B </s>) and trims
    the leading "Ġ" from offsets (RobertaProcessing trim_offsets=True).
  * Llama-style BPE with byte_fallback (tokenizers models/bpe/model.rs merge_word): normalizer
    Prepend("▁") + Replace(" ", "▁"), no pre-tokenizer (the whole text is one word), chars
    missing from the vocabulary become <0xNN> byte tokens, TemplateProcessing adds <s>.
"""
import unicodedata
from dataclasses import dataclass, field

import regex

# ----------------------------------------------------------------------------------------
# Character classes (transformers/tokenization_utils.py: _is_whitespace, _is_control,
# _is_punctuation; BasicTokenizer._is_chinese_char)
# ----------------------------------------------------------------------------------------


def is_whitespace(ch):
    if ch in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


CJK_RANGES = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def is_chinese_char(ch):
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in CJK_RANGES)


# ----------------------------------------------------------------------------------------
# Encodings
# ----------------------------------------------------------------------------------------


@dataclass
class Encoding:
    ids: list = field(default_factory=list)
    tokens: list = field(default_factory=list)
    type_ids: list = field(default_factory=list)
    sequence_ids: list = field(default_factory=list)
    offsets: list = field(default_factory=list)

    def add(self, tok_id, token, type_id, seq_id, offset):
        self.ids.append(int(tok_id))
        self.tokens.append(token)
        self.type_ids.append(int(type_id))
        self.sequence_ids.append(int(seq_id))
        self.offsets.append([int(offset[0]), int(offset[1])])

    def add_special(self, tok_id, token, type_id):
        self.add(tok_id, token, type_id, -1, (0, 0))

    def extend(self, pieces, type_id, seq_id):
        for tok_id, token, off in pieces:
            self.add(tok_id, token, type_id, seq_id, off)


def _span(align, i, j):
    """Original [begin, end) of normalized chars i..j-1."""
    return (align[i][0], align[j - 1][1])


# ----------------------------------------------------------------------------------------
# BPE core (tokenizers models/bpe/word.rs merge_all: lowest rank first, ties leftmost)
# ----------------------------------------------------------------------------------------


def bpe_merge(symbols, ranks):
    """symbols: list of (string, first_unit, end_unit).  Merges adjacent pairs in order of
    rank (position breaks ties) until no adjacent pair has a rank."""
    syms = list(symbols)
    while len(syms) > 1:
        best_rank, best_i = None, -1
        for i in range(len(syms) - 1):
            r = ranks.get((syms[i][0], syms[i + 1][0]))
            if r is not None and (best_rank is None or r < best_rank):
                best_rank, best_i = r, i
        if best_rank is None:
            break
        a, b = syms[best_i], syms[best_i + 1]
        syms[best_i:best_i + 2] = [(a[0] + b[0], a[1], b[2])]
    return syms


# ----------------------------------------------------------------------------------------
# WordPiece (BERT)
# ----------------------------------------------------------------------------------------


class WordPieceTokenizer:
    def __init__(self, vocab, do_lower_case=True, strip_accents=None, tokenize_chinese_chars=True,
                 unk="[UNK]", cls="[CLS]", sep="[SEP]", max_input_chars_per_word=100):
        self.vocab = vocab  # {token: id}
        self.do_lower_case = do_lower_case
        self.strip_accents = strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.unk, self.cls, self.sep = unk, cls, sep
        self.max_chars = max_input_chars_per_word

    def _words(self, text):
        """BasicTokenizer: -> list of words, each a list of (char, (begin, end))."""
        # _clean_text: drop NUL, U+FFFD and control chars; whitespace -> " "
        chars = []
        for i, c in enumerate(text):
            if ord(c) == 0 or ord(c) == 0xFFFD or is_control(c):
                continue
            chars.append((" " if is_whitespace(c) else c, (i, i + 1)))
        # _tokenize_chinese_chars: spaces around CJK ideographs
        if self.tokenize_chinese_chars:
            out = []
            for c, a in chars:
                if is_chinese_char(c):
                    out += [(" ", a), (c, a), (" ", a)]
                else:
                    out.append((c, a))
            chars = out
        # whitespace_tokenize
        words, cur = [], []
        for c, a in chars:
            if c.isspace():
                if cur:
                    words.append(cur)
                cur = []
            else:
                cur.append((c, a))
        if cur:
            words.append(cur)
        strip = self.strip_accents
        if strip is None:
            strip = self.do_lower_case  # "strip_accents follows lowercase when None"
        result = []
        for w in words:
            if self.do_lower_case:  # lowercase each char (as tokenizers' NormalizedString)
                w = [(lc, a) for c, a in w for lc in c.lower()]
            if strip:  # _run_strip_accents: NFD, drop Mn
                w = [(d, a) for c, a in w for d in unicodedata.normalize("NFD", c)
                     if unicodedata.category(d) != "Mn"]
            # _run_split_on_punc
            cur = []
            for c, a in w:
                if is_punctuation(c):
                    if cur:
                        result.append(cur)
                    result.append([(c, a)])
                    cur = []
                else:
                    cur.append((c, a))
            if cur:
                result.append(cur)
        return [w for w in result if w]

    def _wordpiece(self, word):
        """WordpieceTokenizer.tokenize on one word -> [(id, token, (begin, end))]."""
        align = [a for _, a in word]
        s = "".join(c for c, _ in word)
        full = _span(align, 0, len(word))
        if len(word) > self.max_chars:
            return [(self.vocab[self.unk], self.unk, full)]
        out, start = [], 0
        while start < len(word):
            end, cur = len(word), None
            while start < end:
                sub = s[start:end]
                if start > 0:
                    sub = "##" + sub
                if sub in self.vocab:
                    cur = sub
                    break
                end -= 1
            if cur is None:
                return [(self.vocab[self.unk], self.unk, full)]
            out.append((self.vocab[cur], cur, _span(align, start, end)))
            start = end
        return out

    def encode_pieces(self, text):
        return [p for w in self._words(text) for p in self._wordpiece(w)]

    def encode(self, text, pair=None, add_special_tokens=True):
        enc = Encoding()
        if add_special_tokens:
            enc.add_special(self.vocab[self.cls], self.cls, 0)
        enc.extend(self.encode_pieces(text), 0, 0)
        if add_special_tokens:
            enc.add_special(self.vocab[self.sep], self.sep, 0)
        if pair is not None:
            enc.extend(self.encode_pieces(pair), 1, 1)
            if add_special_tokens:
                enc.add_special(self.vocab[self.sep], self.sep, 1)
        return enc


# ----------------------------------------------------------------------------------------
# Byte-level BPE (GPT-2 / RoBERTa / Qwen2)
# ----------------------------------------------------------------------------------------

# tokenization_gpt2.py / tokenizers pre_tokenizers/byte_level.rs
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# tokenization_qwen2.py PRETOKENIZE_REGEX (tokenizer.json: Split, behavior Isolated)
QWEN2_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                 r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BYTE_ENCODER = bytes_to_unicode()
BYTE_ORDER = list(BYTE_ENCODER.keys())  # GPT-2 vocab order of the 256 byte symbols


def split_isolated(pattern, text):
    """Split pre-tokenizer with behavior Isolated: matches and the gaps between them."""
    pieces, pos = [], 0
    for m in regex.finditer(pattern, text):
        if m.start() > pos:
            pieces.append((pos, m.start()))
        if m.end() > m.start():
            pieces.append((m.start(), m.end()))
        pos = m.end()
    if pos < len(text):
        pieces.append((pos, len(text)))
    return pieces


class ByteLevelBPETokenizer:
    def __init__(self, vocab, merges, pattern=GPT2_PATTERN, style="gpt2", nfc=False):
        self.vocab = vocab
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.pattern = pattern
        # "gpt2" (no specials), "roberta" (<s> A </s></s> B </s>), "qwen2", "opt" (OPT's
        # GPT2Tokenizer with add_bos_token: </s> A)
        self.style = style
        self.nfc = nfc

    def encode_pieces(self, text):
        if self.nfc and unicodedata.normalize("NFC", text) != text:
            raise ValueError("reference only supports NFC input for the NFC normalizer")
        out = []
        for b, e in split_isolated(self.pattern, text):
            units = []  # (byte char, original char index)
            for i in range(b, e):
                for byte in text[i].encode("utf-8"):
                    units.append((BYTE_ENCODER[byte], i))
            merged = bpe_merge([(u, k, k + 1) for k, (u, _) in enumerate(units)], self.ranks)
            for tok, s, t in merged:
                off = [units[s][1], units[t - 1][1] + 1]
                if self.style == "roberta":  # trim_offsets=True (byte_level.rs process_offsets)
                    lead = len(tok) - len(tok.lstrip("Ġ"))
                    trail = len(tok) - len(tok.rstrip("Ġ"))
                    if lead:
                        off[0] = min(off[0] + lead, off[1])
                    if trail and off[1] >= trail:
                        off[1] = max(off[1] - trail, off[0])
                out.append((self.vocab[tok], tok, tuple(off)))
        return out

    def encode(self, text, pair=None, add_special_tokens=True):
        enc = Encoding()
        a = self.encode_pieces(text)
        b = self.encode_pieces(pair) if pair is not None else None
        if self.style == "roberta" and add_special_tokens:
            bos, eos = self.vocab["<s>"], self.vocab["</s>"]
            enc.add_special(bos, "<s>", 0)
            enc.extend(a, 0, 0)
            enc.add_special(eos, "</s>", 0)
            if b is not None:
                enc.add_special(eos, "</s>", 0)
                enc.extend(b, 0, 1)
                enc.add_special(eos, "</s>", 0)
            return enc
        if self.style == "opt" and add_special_tokens:
            if b is not None:
                raise ValueError("the reference has no OPT text pairs")
            enc.add_special(self.vocab["</s>"], "</s>", 0)
        # GPT-2 / Qwen2: the ByteLevel post-processor adds nothing.  RoBERTa token type ids are
        # all 0 (create_token_type_ids_from_sequences, type_vocab_size 1).
        enc.extend(a, 0, 0)
        if b is not None:
            enc.extend(b, 0 if self.style == "roberta" else 1, 1)
        return enc


# ----------------------------------------------------------------------------------------
# Llama-2 style BPE with byte fallback
# ----------------------------------------------------------------------------------------

SPIECE = "▁"


class LlamaBPETokenizer:
    def __init__(self, vocab, merges, unk="<unk>", bos="<s>", add_bos=True, fuse_unk=True,
                 byte_fallback=True):
        self.vocab = vocab
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.unk, self.bos, self.add_bos = unk, bos, add_bos
        self.fuse_unk, self.byte_fallback = fuse_unk, byte_fallback

    def normalize(self, text):
        """Sequence[Prepend("▁"), Replace(" ", "▁")] -> (chars, align)."""
        if not text:
            return [], []
        chars = [SPIECE] + list(text)
        align = [(0, 1)] + [(i, i + 1) for i in range(len(text))]
        chars = [SPIECE if c == " " else c for c in chars]
        return chars, align

    def encode_pieces(self, text):
        chars, align = self.normalize(text)
        if not chars:
            return []
        # merge_word: one symbol per char, byte fallback for chars missing from the vocab
        syms, unk = [], None
        for k, c in enumerate(chars):
            if c in self.vocab:
                if unk is not None:
                    syms.append(unk)
                    unk = None
                syms.append((c, k, k + 1))
                continue
            if self.byte_fallback:
                codes = ["<0x%02X>" % byte for byte in c.encode("utf-8")]
                if all(x in self.vocab for x in codes):
                    if unk is not None:  # unreachable when all 256 <0xNN> tokens exist
                        syms.append(unk)  # (tokenizers would emit the pending unk later)
                        unk = None
                    syms += [(x, k, k + 1) for x in codes]
                    continue
            if unk is not None and self.fuse_unk:
                unk = (self.unk, unk[1], k + 1)
            else:
                if unk is not None:
                    syms.append(unk)
                unk = (self.unk, k, k + 1)
        if unk is not None:
            syms.append(unk)
        merged = bpe_merge(syms, self.ranks)
        return [(self.vocab[t], t, _span(align, s, e)) for t, s, e in merged]

    def encode(self, text, pair=None, add_special_tokens=True):
        enc = Encoding()
        if add_special_tokens and self.add_bos:
            enc.add_special(self.vocab[self.bos], self.bos, 0)
        enc.extend(self.encode_pieces(text), 0, 0)
        if pair is not None:
            if add_special_tokens and self.add_bos:
                enc.add_special(self.vocab[self.bos], self.bos, 1)
            enc.extend(self.encode_pieces(pair), 1, 1)
        return enc
