"""Benchmark decontamination: find the documents that share text with an evaluation item.

Text on both sides is normalized the same way (NFKC, which also folds full-width letters, digits
and punctuation, then lowercase) and read as tokens: a run of letters and digits of an alphabetic
script is one token, a Han or kana character is one; punctuation, spaces and line breaks only
separate tokens, so a copy rewrapped, respaced or repunctuated reads the same.

An item (a question and its gold answer's text) gives keys: every ``ngram``-token window of its
tokens, and, when its question is shorter than ``ngram`` tokens, the whole question (if it has at
least ``min_item_tokens``; shorter items are skipped). A key found in more than
``max_items_per_ngram`` items is common exam phrasing and is ignored. A document matches an item
when it holds its whole question (a short item) or two of its n-gram windows (one, for a question of
exactly ``ngram`` tokens or an item with one window left): a window that is mostly shared phrasing
plus one token can meet an unrelated page by chance, two windows of a copy cannot.

The keys live in open-addressing hash tables of 64-bit polynomial hashes over the token hashes;
a compiled pass over a batch of documents checks every position's ``min_item_tokens``-token
prefix against the table of the keys' prefixes and, only on a hit, the keys of each length. Its
memory is the evaluation sets', whatever the corpus.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
import pyarrow as pa

from common.errors import KilnError
from common.eval_sets import SHIPPED_EVAL_SETS, EvalFile, EvalItem, read_eval_sets
from stages.dedup.config import DecontaminateConfig

INDEX_NAME, ITEMS_NAME = "decontaminate_index.npz", "decontaminate_items.json"
CONTAMINATED = "contaminated"  # the drop reason
CUT_OUTPUT = "_excised"  # the spans cut out of kept documents (mode excise), for audit
TOP_ITEMS = 10
WINDOWS_TO_MATCH = 2  # distinct n-gram windows of an item a document must hold (fewer when the item has fewer)
OTHER, WORD, SINGLE = 0, 1, 2  # a code point's part in a token
_KIND_TABLE_SIZE = 0x32000  # past the last Han block (extension H ends at U+323AF; beyond is rare)
_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)
_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: the polynomial hash's base over token hashes
_LENGTH_MIX = np.uint64(0xC2B2AE3D27D4EB4F)
_EMPTY = np.uint64(0)


@functools.lru_cache(maxsize=1)
def token_kinds() -> np.ndarray:
    """Per code point below U+32000: WORD for letters and digits, SINGLE for Han and kana, else OTHER."""
    kinds = np.array([WORD if chr(c).isalnum() else OTHER for c in range(_KIND_TABLE_SIZE)], dtype=np.uint8)
    for low, high in ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x31FFF)):
        kinds[low:high + 1] = np.where(kinds[low:high + 1] == WORD, SINGLE, kinds[low:high + 1])
    return kinds


def normalize(text: str) -> str:
    """NFKC and lowercase: the text tokens are read from (full-width forms become their ASCII twins)."""
    return unicodedata.normalize("NFKC", text).lower()


def code_points(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The texts' code points back to back (uint32) and where each text starts (one more entry: the end)."""
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=starts[1:])
    return np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32), starts


@numba.njit(cache=True, nogil=True)
def _tokenize(cp, kinds, start, end, prefix, token_start, token_end):
    """Tokens of cp[start:end]: their prefix hashes (prefix[i] hashes the first i tokens) and character spans
    (relative to ``start``); returns how many."""
    count = 0
    prefix[0] = _EMPTY
    at = start
    size = kinds.size
    while at < end:
        char = cp[at]
        kind = kinds[char] if char < size else OTHER
        if kind == OTHER:
            at += 1
            continue
        first = at
        token = _FNV_OFFSET
        if kind == SINGLE:
            token = (token ^ np.uint64(char)) * _FNV_PRIME
            at += 1
        else:
            while at < end:
                char = cp[at]
                if (kinds[char] if char < size else OTHER) != WORD:
                    break
                token = (token ^ np.uint64(char)) * _FNV_PRIME
                at += 1
        token_start[count] = first - start
        token_end[count] = at - start
        prefix[count + 1] = prefix[count] * _BASE + token
        count += 1
    return count


@numba.njit(cache=True, nogil=True)
def _key(prefix, powers, first, length):
    """The hash of tokens [first, first + length), mixed with the length; never 0 (an empty slot)."""
    value = (prefix[first + length] - prefix[first] * powers[length]) ^ (np.uint64(length) * _LENGTH_MIX)
    return value if value != _EMPTY else np.uint64(1)


@numba.njit(cache=True, nogil=True)
def _slot(table, key):
    """The slot of ``key`` in ``table``, or -1."""
    mask = np.uint64(table.size - 1)
    at = ((key ^ (key >> np.uint64(29))) * _BASE) & mask
    while True:
        found = table[at]
        if found == key:
            return np.int64(at)
        if found == _EMPTY:
            return np.int64(-1)
        at = (at + np.uint64(1)) & mask


@numba.njit(cache=True, nogil=True)
def _fill(table, values, keys):
    """Insert distinct ``keys``; ``values`` (if not empty) gets each key's index at its slot."""
    mask = np.uint64(table.size - 1)
    for index in range(keys.size):
        key = keys[index]
        at = ((key ^ (key >> np.uint64(29))) * _BASE) & mask
        while table[at] != _EMPTY and table[at] != key:
            at = (at + np.uint64(1)) & mask
        table[at] = key
        if values.size:
            values[at] = index


def _table(keys: np.ndarray, with_values: bool) -> tuple[np.ndarray, np.ndarray]:
    size = 1 << max(4, int(2 * max(keys.size, 1) - 1).bit_length())  # at most half full
    table = np.zeros(size, dtype=np.uint64)
    values = np.full(size if with_values else 0, -1, dtype=np.int64)
    _fill(table, values, keys)
    return table, values


@numba.njit(cache=True, nogil=True)
def _item_keys(prefix, powers, tokens, question_tokens, ngram, anchor_length):
    """The keys of one item (``tokens`` of question then answer, the first ``question_tokens`` the question's) and
    the ``anchor_length``-token prefix of each."""
    keys, anchors = [], []
    for first in range(tokens - ngram + 1):
        keys.append(_key(prefix, powers, first, ngram))
        anchors.append(_key(prefix, powers, first, anchor_length))
    if anchor_length <= question_tokens < ngram:
        keys.append(_key(prefix, powers, 0, question_tokens))
        anchors.append(_key(prefix, powers, 0, anchor_length))
    return keys, anchors


@numba.njit(cache=True, nogil=True)
def _scan(cp, starts, kinds, powers, anchors, keys, key_index, lengths, anchor_length):
    """Every match in the batch: (document, key index, first character, end character, tokens), characters
    relative to the document's start in ``cp``."""
    longest = 0
    for doc in range(starts.size - 1):
        longest = max(longest, starts[doc + 1] - starts[doc])
    prefix = np.empty(longest + 1, dtype=np.uint64)
    token_start = np.empty(longest, dtype=np.int64)
    token_end = np.empty(longest, dtype=np.int64)
    found = []
    for doc in range(starts.size - 1):
        tokens = _tokenize(cp, kinds, starts[doc], starts[doc + 1], prefix, token_start, token_end)
        for first in range(tokens - anchor_length + 1):
            if _slot(anchors, _key(prefix, powers, first, anchor_length)) < 0:
                continue
            for length in lengths:
                if first + length > tokens:
                    break
                slot = _slot(keys, _key(prefix, powers, first, length))
                if slot >= 0:
                    found.append((doc, key_index[slot], token_start[first], token_end[first + length - 1], length))
    return found


@numba.njit(cache=True, nogil=True)
def _powers(count):
    """_BASE to the powers 0..count (mod 2**64)."""
    powers = np.ones(count + 1, dtype=np.uint64)
    for i in range(1, count + 1):
        powers[i] = powers[i - 1] * _BASE
    return powers


def _prefix(text: str) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """One normalized text's prefix hashes, token count and token character spans."""
    cp, starts = code_points([text])
    prefix = np.empty(len(text) + 1, dtype=np.uint64)
    token_start = np.empty(len(text), dtype=np.int64)
    token_end = np.empty(len(text), dtype=np.int64)
    count = _tokenize(cp, token_kinds(), 0, len(text), prefix, token_start, token_end)
    return prefix, count, token_start, token_end


def token_count(text: str) -> int:
    """Tokens of ``text`` as matching reads them."""
    return _prefix(normalize(text))[1]


@dataclass(frozen=True)
class Match:
    """Where a document holds an item's key: the item's index and the matched characters of the document."""

    item: int
    start: int
    end: int
    key: int
    window: bool  # an n-gram window (else the item's whole question)


@dataclass
class ContaminationIndex:
    """The keys of every evaluation item, ready to scan documents with."""

    items: list[EvalItem]
    files: list[EvalFile]
    ngram: int
    anchor_length: int
    anchors: np.ndarray
    keys: np.ndarray
    key_index: np.ndarray
    lengths: np.ndarray
    item_offsets: np.ndarray  # key i's items are key_items[item_offsets[i]:item_offsets[i + 1]]
    key_items: np.ndarray
    windows_needed: np.ndarray  # per item: distinct windows a document must hold
    skipped: dict[str, int]  # per set: items too short to match
    common_ngrams: int  # keys ignored as common phrasing

    @classmethod
    def build(cls, items: list[EvalItem], files: list[EvalFile], cfg: DecontaminateConfig,
              min_window_share: float = 0.0) -> ContaminationIndex:
        """The keys of ``items`` (see the module's docstring). ``min_window_share`` raises the windows a document
        must hold to that share of an item's windows: long items such as whole held-out documents share a sentence
        or two with many pages, and are copied only where most of their text is."""
        powers = _powers(cfg.ngram)
        item_keys: list[np.ndarray] = []
        owners: list[np.ndarray] = []
        windows: list[np.ndarray] = []
        anchors: list[np.ndarray] = []
        lengths = {cfg.ngram}
        in_question = np.full(len(items), WINDOWS_TO_MATCH, dtype=np.int64)  # windows a copy of the question holds
        skipped: Counter[str] = Counter()
        for index, item in enumerate(items):
            question = normalize(item.question)
            prefix, tokens, _, _ = _prefix(f"{question}\n{normalize(item.answer)}")
            question_tokens = _prefix(question)[1]
            keys, starts = _item_keys(prefix, powers, tokens, question_tokens, cfg.ngram, cfg.min_item_tokens)
            if not keys:
                skipped[item.set_name] += 1
                continue
            if cfg.min_item_tokens <= question_tokens < cfg.ngram:
                lengths.add(question_tokens)
            if question_tokens >= cfg.ngram:
                in_question[index] = question_tokens - cfg.ngram + 1
            distinct, first = np.unique(np.array(keys, dtype=np.uint64), return_index=True)
            item_keys.append(distinct)
            owners.append(np.full(distinct.size, index, dtype=np.int64))
            windows.append(first < max(tokens - cfg.ngram + 1, 0))  # _item_keys lists the windows first
            anchors.append(np.array(starts, dtype=np.uint64))
        key_of = np.concatenate(item_keys) if item_keys else np.zeros(0, np.uint64)
        owner = np.concatenate(owners) if owners else np.zeros(0, np.int64)
        window = np.concatenate(windows) if windows else np.zeros(0, bool)
        order = np.argsort(key_of, kind="stable")
        key_of, owner, window = key_of[order], owner[order], window[order]
        distinct, counts = np.unique(key_of, return_counts=True)
        common = counts > cfg.max_items_per_ngram
        kept = ~np.repeat(common, counts)
        counts = counts[~common]
        keys, key_index = _table(distinct[~common], with_values=True)
        anchor_table, _ = _table(np.unique(np.concatenate(anchors)) if anchors else np.zeros(0, np.uint64),
                                 with_values=False)
        held = np.bincount(owner[kept & window], minlength=len(items))
        needed = np.minimum.reduce([held, in_question, np.full(len(items), WINDOWS_TO_MATCH)])
        if min_window_share > 0:
            share = np.ceil(min_window_share * np.bincount(owner[window], minlength=len(items))).astype(np.int64)
            needed = np.minimum(held, np.maximum(needed, share))
        return cls(items, files, cfg.ngram, cfg.min_item_tokens, anchor_table, keys, key_index,
                   np.array(sorted(lengths), dtype=np.int64), np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
                   owner[kept], needed, dict(skipped), int(common.sum()))

    @functools.cached_property
    def powers(self) -> np.ndarray:
        """The hash base's powers up to the longest key: computed once per index, not per batch."""
        return _powers(int(self.lengths.max()))

    def scan(self, texts: list[str]) -> list[list[Match]]:
        """Each text's matches (character offsets into the text as given)."""
        normalized = [normalize(t) for t in texts]
        cp, starts = code_points(normalized)
        found = _scan(cp, starts, token_kinds(), self.powers, self.anchors, self.keys,
                      self.key_index, self.lengths, self.anchor_length) if cp.size else []
        matches: list[list[Match]] = [[] for _ in texts]
        for doc, key, start, end, length in found:
            for item in self.key_items[self.item_offsets[key]:self.item_offsets[key + 1]].tolist():
                matches[doc].append(Match(item, start, end, key, length == self.ngram))
        for doc in {doc for doc, *_ in found}:
            matches[doc] = self._confirmed(matches[doc])
            if matches[doc] and len(normalized[doc]) != len(texts[doc]):
                matches[doc] = _to_original(texts[doc], matches[doc])
        return matches

    def _confirmed(self, matches: list[Match]) -> list[Match]:
        """The matches of the items a document holds: the whole question, or enough distinct windows."""
        windows: dict[int, set[int]] = {}
        whole: set[int] = set()
        for m in matches:
            if m.window:
                windows.setdefault(m.item, set()).add(m.key)
            else:
                whole.add(m.item)
        held = whole | {item for item, keys in windows.items()
                        if len(keys) >= self.windows_needed[item]}
        return [m for m in matches if m.item in held]

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` (the stage's work folder)."""
        np.savez(folder / INDEX_NAME, anchors=self.anchors, keys=self.keys, key_index=self.key_index,
                 lengths=self.lengths, item_offsets=self.item_offsets, key_items=self.key_items,
                 windows_needed=self.windows_needed,
                 sizes=np.array([self.ngram, self.anchor_length, self.common_ngrams]))
        (folder / ITEMS_NAME).write_text(json.dumps({
            "items": [[i.set_name, i.file, i.row, i.question, i.answer] for i in self.items],
            "files": [f.__dict__ for f in self.files], "skipped": self.skipped}, ensure_ascii=False))

    @classmethod
    def load(cls, folder: Path) -> ContaminationIndex:
        """The index ``save`` wrote to ``folder``."""
        return _load(str(folder), (folder / INDEX_NAME).stat().st_mtime_ns)


@functools.lru_cache(maxsize=2)
def _load(folder: str, _mtime: int) -> ContaminationIndex:
    """One load per worker process and index file."""
    arrays = np.load(Path(folder) / INDEX_NAME)
    meta = json.loads((Path(folder) / ITEMS_NAME).read_text())
    ngram, anchor_length, common = arrays["sizes"].tolist()
    return ContaminationIndex([EvalItem(*i) for i in meta["items"]], [EvalFile(**f) for f in meta["files"]], ngram,
                              anchor_length, arrays["anchors"], arrays["keys"], arrays["key_index"], arrays["lengths"],
                              arrays["item_offsets"], arrays["key_items"], arrays["windows_needed"], meta["skipped"],
                              common)


def _to_original(text: str, matches: list[Match]) -> list[Match]:
    """Matches found in the normalized text, with character offsets into ``text`` itself (NFKC or lowercasing
    changed its length: each character is normalized alone to map offsets back)."""
    ends = np.cumsum([len(normalize(char)) for char in text])
    return [Match(m.item, int(np.searchsorted(ends, m.start, side="right")),
                  int(np.searchsorted(ends, m.end - 1, side="right")) + 1, m.key, m.window) for m in matches]


def eval_set_paths(cfg: DecontaminateConfig) -> list[Path]:
    """The configured evaluation sets, or the shipped samples."""
    if cfg.eval_sets is None:
        return [SHIPPED_EVAL_SETS]
    return [Path(p).expanduser() for p in cfg.eval_sets]


def build_index(cfg: DecontaminateConfig) -> ContaminationIndex:
    """Read the configured evaluation sets and build their index; refuse sets that give nothing to match."""
    items, files = read_eval_sets(eval_set_paths(cfg), cfg.text_field)
    index = ContaminationIndex.build(items, files, cfg)
    if index.key_items.size == 0:
        raise KilnError(f"decontaminate: none of the {len(items):,} items of {', '.join(sorted({f.set_name for f in files}))} "
                        f"is long enough to match ({cfg.min_item_tokens} tokens, decontaminate.min_item_tokens) once "
                        "common phrasing is ignored: check the files, or set decontaminate.enabled=false")
    return index


def excise(text: str, matches: list[Match], margin: int, min_piece_tokens: int) -> tuple[list[str], int]:
    """The pieces of ``text`` left when each matched span, widened by ``margin`` characters on either side, is cut
    out; pieces with fewer than ``min_piece_tokens`` tokens are left out too. Also returns the number of cuts
    (overlapping spans make one)."""
    cuts: list[list[int]] = []
    for start, end in sorted((max(m.start - margin, 0), min(m.end + margin, len(text))) for m in matches):
        if cuts and start <= cuts[-1][1]:
            cuts[-1][1] = max(cuts[-1][1], end)
        else:
            cuts.append([start, end])
    pieces, at = [], 0
    for start, end in cuts:
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    kept = [p.strip() for p in pieces if token_count(p) >= min_piece_tokens]
    return kept, len(cuts)


@dataclass
class Decontaminated:
    """One batch after decontamination: the documents kept (texts excised where cut), the rows removed with why,
    the spans cut out of kept documents, and the counts per evaluation set."""

    kept: pa.Table
    removed: pa.Table
    signals: list[str]
    cut: pa.Table
    stats: dict


CUT_SCHEMA = pa.schema([("doc_id", pa.int64()), ("source_id", pa.string()), ("eval_set", pa.string()),
                        ("item", pa.string()), ("start", pa.int64()), ("end", pa.int64()), ("text", pa.large_string())])


def _signal(index: ContaminationIndex, text: str, matches: list[Match]) -> str:
    """Which item matched where, for the exclusion record (the first match, and how many more items)."""
    first = matches[0]
    item = index.items[first.item]
    others = len({m.item for m in matches}) - 1
    return (f"{item.set_name} {item.where} at characters {first.start}-{first.end}: "
            f"{text[first.start:first.end][:120]!r}" + (f" (+{others} more items)" if others else ""))


def decontaminate(table: pa.Table, index: ContaminationIndex, cfg: DecontaminateConfig) -> Decontaminated:
    """Match ``table``'s documents against ``index``; drop the matching ones, or (mode excise) cut the matched
    spans out and drop only the documents left with no piece long enough."""
    texts = table.column("text").to_pylist()
    matches = index.scan(texts)
    removed_rows, signals, new_texts = [], [], list(texts)
    cut: dict[str, list] = {name: [] for name in CUT_SCHEMA.names}
    per_set: dict[str, dict] = {}
    doc_ids = table.column("doc_id").to_pylist()
    source_ids = table.column("source_id").to_pylist()
    for row, found in enumerate(matches):
        if not found:
            continue
        text = texts[row]
        pieces, cuts = excise(text, found, cfg.excise_margin_chars, cfg.min_piece_tokens) \
            if cfg.mode == "excise" else ([], 0)
        removed_chars = len(text) - sum(map(len, pieces))
        if pieces:
            new_texts[row] = "\n".join(pieces)
            for m in found:
                item = index.items[m.item]
                for name, value in zip(CUT_SCHEMA.names, (doc_ids[row], source_ids[row], item.set_name, item.where,
                                                          m.start, m.end, text[m.start:m.end]), strict=True):
                    cut[name].append(value)
        else:
            removed_rows.append(row)
            signals.append(_signal(index, text, found))
        for set_name in {index.items[m.item].set_name for m in found}:
            counts = per_set.setdefault(set_name, {"documents": 0, "chars": 0, "excised_documents": 0, "cuts": 0,
                                                   "items": {}})
            counts["documents" if not pieces else "excised_documents"] += 1
            counts["chars"] += removed_chars
            counts["cuts"] += cuts
            for where in {index.items[m.item].where for m in found if index.items[m.item].set_name == set_name}:
                counts["items"][where] = counts["items"].get(where, 0) + 1
    kept_mask = np.ones(len(texts), dtype=bool)
    kept_mask[removed_rows] = False
    result = table
    if new_texts != texts:
        column = table.schema.get_field_index("text")
        result = table.set_column(column, table.schema.field(column), pa.array(new_texts, table.schema.field(column).type))
    return Decontaminated(result.filter(pa.array(kept_mask)), table.take(pa.array(removed_rows, pa.int64())),
                          signals, pa.table(cut, schema=CUT_SCHEMA), {"decontamination": per_set} if per_set else {})


def report(index: ContaminationIndex, cfg: DecontaminateConfig, found: dict) -> dict:
    """The decontamination report: the settings, every file checked (with its sha256) and, per evaluation set, its
    items, those too short to match, those found in the corpus, the documents and characters removed and the
    most-matched items. ``found``: the units' merged counts (``Decontaminated.stats``)."""
    items_per_set = Counter(item.set_name for item in index.items)
    by_where = {(item.set_name, item.where): item for item in index.items}
    sets = {}
    for name in sorted(items_per_set):
        counts = found.get(name, {})
        top = sorted(counts.get("items", {}).items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_ITEMS]
        sets[name] = {
            "items": items_per_set[name], "skipped_short": index.skipped.get(name, 0),
            "items_found": len(counts.get("items", {})), "documents": counts.get("documents", 0),
            "excised_documents": counts.get("excised_documents", 0), "cuts": counts.get("cuts", 0),
            "chars": counts.get("chars", 0),
            "top_items": [{"item": where, "question": by_where[name, where].question, "documents": n}
                          for where, n in top],
        }
    return {"mode": cfg.mode, "ngram": cfg.ngram, "min_item_tokens": cfg.min_item_tokens,
            "max_items_per_ngram": cfg.max_items_per_ngram, "common_ngrams_ignored": index.common_ngrams,
            "files": [f.__dict__ for f in index.files], "sets": sets}


def compile_kernels() -> None:
    """Compile the matching kernels into numba's cache (the dedup image's build runs this, so no run pays for it)."""
    item = EvalItem("warm-up", "warm-up", 1, "a question long enough to give the index its keys", "an answer")
    ContaminationIndex.build([item], [], DecontaminateConfig()).scan([f"text with {item.question} in it"])
