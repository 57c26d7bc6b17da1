"""Defects planted into clean documents: near duplicates, mojibake, symbol runs and timestamps."""

from __future__ import annotations

import random
import re

import ftfy
import ftfy.bad_codecs  # noqa: F401  (registers the sloppy-windows-1252 codec)

from common.text import TOKEN_RE, dedup_tokens, jaccard, shingles
from demo import content_en

_SENTENCE_RE = re.compile(r"[^\s.!?。！？][^.!?。！？\n]*[.!?。！？]+")
_HAN_START = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_TURN_RE = re.compile(r"[^\s:：]{1,9}(: |：)\S")


def _fix(text: str) -> str:
    return ftfy.fix_text(text, fix_character_width=False, uncurl_quotes=False)


def _swap_sentences(rng: random.Random, text: str) -> str:
    """Swap two neighbouring sentences of one line, if there are any."""
    found = list(_SENTENCE_RE.finditer(text))
    pairs = [i for i in range(len(found) - 1) if not text[found[i].end() : found[i + 1].start()].strip()]
    if not pairs:
        return text
    first, second = found[(i := rng.choice(pairs))], found[i + 1]
    gap = text[first.end() : second.start()]
    return text[: first.start()] + second.group() + gap + first.group() + text[second.end() :]


def _edit_tokens(rng: random.Random, text: str, count: int, words: tuple[str, ...]) -> str:
    """Substitute, delete, insert or transpose `count` tokens spread over the text."""
    spans = [m.span() for m in TOKEN_RE.finditer(text)]
    picks = sorted(rng.sample(range(len(spans)), min(count, len(spans))), reverse=True)
    picked = set(picks)
    for idx in picks:
        start, end = spans[idx]
        latin = not _HAN_START.match(text, start)
        op = rng.random()
        if op < 0.15 and idx > 0 and idx - 1 not in picked:
            prev_start, prev_end = spans[idx - 1]
            text = text[:prev_start] + text[start:end] + text[prev_end:start] + text[prev_start:prev_end] + text[end:]
        elif op < 0.35:
            end += 1 if latin and text[end : end + 1] == " " else 0
            text = text[:start] + text[end:]
        elif op < 0.55:
            text = text[:start] + rng.choice(words) + (" " if latin else "") + text[start:]
        else:
            text = text[:start] + rng.choice(words) + text[end:]
    return text


def near_duplicate(
    rng: random.Random, text: str, words: tuple[str, ...], low: float, high: float
) -> tuple[str, float] | None:
    """An edited copy whose 5-shingle Jaccard with `text` lies in [low, high], or None if none was found."""
    base = shingles(dedup_tokens(text))
    target = rng.uniform(low + 0.01, high - 0.01)
    count = max(1, round(len(base) * (1 - target) / (5 * (1 + target))))
    for _ in range(24):
        start = _swap_sentences(rng, text) if rng.random() < 0.5 else text
        candidate = _edit_tokens(rng, start, count, words)
        score = jaccard(base, shingles(dedup_tokens(candidate)))
        if low <= score <= high:
            return candidate, score
        step = max(1, count // 5)
        count = count + step if score > high else max(1, count - step)
    return None


def similar_document(
    rng: random.Random, text: str, fresh: str, low: float, high: float
) -> tuple[str, float] | None:
    """`text` with some sentences replaced by sentences of `fresh`, landing at a Jaccard in [low, high]."""
    base = shingles(dedup_tokens(text))
    own = [m.span() for m in _SENTENCE_RE.finditer(text)]
    new = [m.group() for m in _SENTENCE_RE.finditer(fresh)]
    if len(own) < 6 or len(new) < len(own):
        return None
    target = rng.uniform(low + 0.05, high - 0.05)
    keep = 2 * target / (1 + target)
    for _ in range(24):
        replaced = sorted(rng.sample(range(len(own)), round(len(own) * (1 - keep))), reverse=True)
        candidate = text
        for idx, sentence in zip(replaced, rng.sample(new, len(replaced)), strict=True):
            start, end = own[idx]
            candidate = candidate[:start] + sentence + candidate[end:]
        score = jaccard(base, shingles(dedup_tokens(candidate)))
        if low <= score <= high:
            return candidate, score
        keep = min(0.95, keep + 0.04) if score < low else max(0.05, keep - 0.04)
    return None


def mojibake_repairable(rng: random.Random, text: str) -> str | None:
    """UTF-8 bytes of `text` decoded as a Western single-byte codec, only when ftfy restores it exactly."""
    raw = text.encode("utf-8")
    for codec in rng.sample(("cp1252", "sloppy-windows-1252", "latin-1"), 3):
        try:
            bad = raw.decode(codec)
        except UnicodeDecodeError:
            continue
        if bad != text and _fix(bad) == text:
            return bad
    return None


def mojibake_unrepairable(rng: random.Random, text: str, lang: str) -> str:
    """Text broken beyond ftfy's reach: GBK misreading, or bytes lost and replaced by U+FFFD."""
    while True:
        if lang == "zh" and rng.random() < 0.5:
            bad = text.encode("utf-8").decode("gbk", errors="replace")
        elif lang == "zh":
            raw = bytearray(text.encode("utf-8"))
            for pos in sorted(rng.sample(range(len(raw)), max(1, len(raw) // 30)), reverse=True):
                del raw[pos]
            bad = raw.decode("utf-8", errors="replace")
        else:
            chars = [c if c.isascii() else "\ufffd\ufffd" for c in text]
            for pos in rng.sample(range(len(chars)), max(1, len(chars) // 20)):
                chars[pos] = "\ufffd"
            bad = "".join(chars)
        if _fix(bad) != text:
            return bad


_C1_CONTROLS = dict.fromkeys(range(0x80, 0xA0))


def mojibake_lossy(rng: random.Random, text: str) -> str | None:
    """UTF-8 read as cp1252 or Latin-1 with bytes lost on the way: undefined bytes dropped or C1
    controls stripped, so ftfy cannot restore it. None when ``text`` is ASCII."""
    if text.isascii():
        return None
    raw = text.encode("utf-8")
    lossy_cp1252 = rng.random() < 0.5
    bad = raw.decode("cp1252", errors="ignore") if lossy_cp1252 else raw.decode("latin-1").translate(_C1_CONTROLS)
    return bad if _fix(bad) != text else None


_RUNS = (
    "★★★★★☆☆☆☆☆", "!!!!!!!!!!!!", "~~~~~~~~~~~~", "■■■■■■■■", "==========", "◆◇◆◇◆◇◆◇", "♥♥♥♥♥♥",
    "※※※※※※", "##########", "************", "→→→→→→→→", "▲▼▲▼▲▼", "☆彡☆彡☆彡", "$$$$$$$$$$",
    "……………………", "+++++++++++",
)


def symbol_runs(rng: random.Random, text: str) -> str:
    """Keep the first paragraphs of `text` and bury them in lines of repeated symbols."""
    paragraphs = text.split("\n\n")[: rng.randint(1, 3)]
    runs = rng.sample(_RUNS, 3)
    parts: list[str] = []
    for paragraph in paragraphs:
        parts.append(" ".join([rng.choice(runs)] * rng.randint(2, 5)))
        parts.append(paragraph + rng.choice(runs)[:6])
    symbols = sum(len(p) for p in parts[::2])
    target = sum(len(p) for p in paragraphs) * rng.uniform(0.8, 1.5)
    while symbols < target:
        line = rng.choice(runs) * rng.randint(2, 6)
        parts.insert(rng.randint(0, len(parts)), line)
        symbols += len(line)
    return "\n".join(parts)


_MONTHS = content_en.POOLS["month"]


def _timestamp(rng: random.Random, lang: str) -> str:
    y, mo, d = rng.randint(2012, 2024), rng.randint(1, 12), rng.randint(1, 28)
    h, mi, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    forms = [
        f"{y}-{mo:02d}-{d:02d}", f"{y}/{mo}/{d}", f"{y}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}",
        f"{y}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}Z", f"{y}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}",
    ]
    if lang == "zh":
        forms += [f"{y}年{mo}月{d}日", f"{y}年{mo:02d}月{d:02d}日 {h:02d}:{mi:02d}"] * 2
    else:
        forms += [f"{_MONTHS[mo - 1]} {d}, {y}", f"{d} {_MONTHS[mo - 1]} {y} {h:02d}:{mi:02d}"] * 2
    return rng.choice(forms)


def _clock(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


_HEADERS = {
    "zh": ("发布时间：{}", "更新于 {}", "时间：{}", "来源：本站　{}"),
    "en": ("Posted: {}", "Date: {}", "Published: {}", "Last updated: {}"),
}
_FOOTERS = {
    "zh": ("（本文更新于{}）", "最后修改：{}", "编辑于 {}"),
    "en": ("Last modified: {}", "Retrieved {}", "(Updated {})"),
}
_INLINE = {"zh": ("（{}更新）", "本段内容更新于{}。"), "en": (" (updated {})", " This section was revised on {}.")}
_CLOCK_LINE = {"zh": "生成时间 {}", "en": "Generated at {}"}


def _is_prose(paragraph: str) -> bool:
    return paragraph[-1:] in ".。!！?？" and not paragraph.startswith(("#", "```", "- ", "[")) and "```" not in paragraph


def plant_timestamps(rng: random.Random, text: str, lang: str) -> tuple[str, list[str]]:
    """Add timestamp header/footer lines, inline dates and log-style clock prefixes; return the spans too."""
    spans: list[str] = []

    def stamp(form: str, value: str | None = None) -> str:
        spans.append(value or _timestamp(rng, lang))
        return form.format(spans[-1])

    paragraphs = text.split("\n\n")
    if rng.random() < 0.5:
        prose = [i for i, p in enumerate(paragraphs) if _is_prose(p)]
        if prose:
            i = rng.choice(prose)
            paragraphs[i] += stamp(rng.choice(_INLINE[lang]))
    lines = "\n\n".join(paragraphs).split("\n")
    turns = [i for i, line in enumerate(lines) if _TURN_RE.match(line)]
    if len(turns) > 4 and rng.random() < 0.5:
        for i in rng.sample(turns, rng.randint(2, 4)):
            lines[i] = stamp("[{}] ", _clock(rng)) + lines[i]
    text = "\n".join(lines)
    if not spans or rng.random() < 0.7:
        text = stamp(rng.choice(_HEADERS[lang])) + "\n\n" + text
    if rng.random() < 0.4:
        text += "\n\n" + stamp(rng.choice(_FOOTERS[lang]))
    if rng.random() < 0.15:
        text += "\n" + stamp(_CLOCK_LINE[lang], _clock(rng))
    return text, spans
