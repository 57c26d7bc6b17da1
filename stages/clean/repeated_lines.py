"""Repeated lines: the navigation bars and footers a site or a source puts on many of its documents.

Within a batch, documents are grouped by their site (the host of their URL) or, without a URL, by their source.
A line of at least ``repeated_min_words`` words (Han characters count half) that appears in at least
``repeated_min_documents`` documents of a group, and in at least ``repeated_min_share`` of them, is the group's
boilerplate ("Prev Up Next", "本页面中文版由中文 man 手册页计划提供。", "© 2024 Example Media. All rights
reserved.") and is removed from each document holding it. Short labels and headings ("NAME", "Note", "n.")
stay: they are a document's structure, not its frame.

A document most of whose lines are repeated in its group is a copy, or a page of one template, not a page
with a frame: it is left whole for dedup to judge, and its lines are not counted, so copies of one document
never strip each other.
"""

from __future__ import annotations

import re

import numpy as np

from common.hashing import mix64
from stages.clean.batch_text import BatchText
from stages.clean.config import LineFilterConfig
from stages.clean.lines import words

_GROUP_MIX = np.uint64(0x9E3779B97F4A7C15)
# The host of the "url" in a document's meta (JSON as ingest writes it: json.dumps, sort_keys).
_URL_HOST_RE = re.compile(r'"url": "[A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/"]*@)?([^/:?#"]*)')

MAX_REPEATED_SHARE = 0.5
"""A document with more than this share of its counted lines repeated in its group is a copy: left whole."""


def group_of(meta: str | None, source: str) -> str:
    """The group whose frame a document shares: the host of its URL (``meta``'s ``url``, as ingest writes it),
    else its source."""
    found = _URL_HOST_RE.search(meta) if meta else None
    return f"host:{found.group(1).lower()}" if found and found.group(1) else f"source:{source}"


def repeated_lines(batch: BatchText, groups: list[str], cfg: LineFilterConfig) -> list[set[int]]:
    """Per text of ``batch``, the indices (in ``text.split("\\n")``) of its lines repeated across its group's
    documents. Lines are compared by their hash (BatchText.span_hashes of the stripped line) within a group; only
    the few frequent ones are read for their words."""
    removed: list[set[int]] = [set() for _ in range(batch.docs)]
    lines = batch.lines()
    if len(lines.start) == 0:
        return removed
    doc = batch.doc_of[lines.start]
    _, group_of_doc = np.unique(np.array(groups, dtype=object), return_inverse=True)
    group = group_of_doc[doc]
    line_key = mix64(batch.line_hashes() + group.astype(np.uint64) * _GROUP_MIX)
    keys, key_of_line = np.unique(line_key, return_inverse=True)
    order = np.lexsort((doc, key_of_line))  # each document counts once per line, however often it repeats it
    first_in_doc = np.ones(len(order), dtype=bool)
    first_in_doc[order[1:]] = (key_of_line[order[1:]] != key_of_line[order[:-1]]) | (doc[order[1:]] != doc[order[:-1]])
    needed = np.maximum(cfg.repeated_min_documents, cfg.repeated_min_share * np.bincount(group_of_doc)[group])
    frame_before = _frame(key_of_line, first_in_doc, needed, len(keys))
    long_enough = np.zeros(len(keys), dtype=bool)  # the words of one line of each frequent key
    in_frame = np.flatnonzero(frame_before)
    frequent, one_line = np.unique(key_of_line[in_frame], return_index=True)
    for key, line in zip(frequent.tolist(), in_frame[one_line].tolist(), strict=True):
        long_enough[key] = words(batch.joined[int(lines.start[line]):int(lines.end[line])]) >= cfg.repeated_min_words
    counted = first_in_doc & long_enough[key_of_line] & frame_before
    distinct = np.bincount(doc[first_in_doc], minlength=batch.docs)
    copies = np.bincount(doc[counted], minlength=batch.docs) > MAX_REPEATED_SHARE * distinct
    frame = _frame(key_of_line, first_in_doc & ~copies[doc], needed, len(keys)) & long_enough[key_of_line]
    hits = np.flatnonzero(frame & ~copies[doc])  # in batch order: each document's lines from its first
    previous_doc, position, line_number = -1, 0, 0
    for d, start in zip(doc[hits].tolist(), lines.start[hits].tolist(), strict=True):
        if d != previous_doc:
            previous_doc, position, line_number = d, int(batch.starts[d]), 0
        line_number += batch.joined.count("\n", position, start)  # its index in text.split("\n")
        position = start
        removed[d].add(line_number)
    return removed


def _frame(key_of_line: np.ndarray, counted: np.ndarray, needed: np.ndarray, keys: int) -> np.ndarray:
    """Per line: whether the counted documents holding its line are as many as its group needs."""
    return np.bincount(key_of_line[counted], minlength=keys)[key_of_line] >= needed
