"""Ground truth of the demo corpus, and scoring of a stage's surviving documents against it."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path

KEPT_DEFECTS = ("timestamps", "mojibake_repairable", "near_dup_low", "contamination_negative", "pii", "pii_negative")
DROP_DEFECTS = (
    "exact_dup", "near_dup", "mojibake_unrepairable", "symbol_runs", "spam", "code_stub", "other_lang", "too_short",
    "contaminated",
)
# Planted only in the real-text development set (demo.realtext).
REAL_TEXT_DEFECTS = ("mojibake_lossy", "boilerplate")
REAL_TEXT_KEPT_DEFECTS = ("spam_lines",)  # ad lines inside a real passage: the lines go, the document stays
KEEP_DEFECTS = KEPT_DEFECTS + REAL_TEXT_KEPT_DEFECTS
DEFECTS = DROP_DEFECTS + REAL_TEXT_DEFECTS + KEEP_DEFECTS
MOJIBAKE_DEFECTS = ("mojibake_repairable", "mojibake_unrepairable", "mojibake_lossy")
INGEST_OUTCOMES = ("ok", "bad_json", "bad_utf8", "missing_text", "empty_text")


@dataclass(frozen=True)
class TruthRecord:
    """One planted record: where it is, what it is, and whether a perfect pipeline keeps it."""

    record: str
    file: str
    source_id: str
    lang: str
    category: str
    source: str
    defects: list[str]
    ingest: str
    dup_of: str | None
    jaccard: float | None
    timestamps: list[str]
    orig_sha256: str | None
    expected: str
    genre: str = ""
    ad_lines: list[str] = field(default_factory=list)  # the ad lines planted in a real passage (spam_lines)
    pii: list[str] = field(default_factory=list)  # personal data planted, as written: none may reach the output
    pii_negatives: list[str] = field(default_factory=list)  # look-alikes of it planted: each must stay as written

    def to_json(self) -> str:
        """One line of truth.jsonl."""
        return json.dumps(vars(self), ensure_ascii=False, sort_keys=True)


def load_truth(demo_dir: Path) -> list[TruthRecord]:
    """Read <demo_dir>/truth.jsonl."""
    with open(Path(demo_dir) / "truth.jsonl", encoding="utf-8") as handle:
        return [TruthRecord(**json.loads(line)) for line in handle if line.strip()]


def expected_ingest_counts(truth: list[TruthRecord]) -> dict[str, int]:
    """How many records an ingest stage should accept ("ok") or reject, per reason."""
    counts = Counter(r.ingest for r in truth)
    return {outcome: counts.get(outcome, 0) for outcome in INGEST_OUTCOMES}


def format_ingest_outcomes(truth: list[TruthRecord], got: dict[str, int]) -> str:
    """A table of the records an ingest stage should accept or reject per reason, beside the counts it ``got``."""
    expected = expected_ingest_counts(truth)
    rows = [f"{outcome:<15}  {expected.get(outcome, 0):>8}   {got.get(outcome, 0):>5}"
            for outcome in sorted(set(expected) | set(got))]
    return "\n".join(["ingest outcome   expected   got", *rows])


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclass(frozen=True)
class KindScore:
    """Removal of one planted kind: a defect, or "ingest:<reason>" for records ingest must reject."""

    kind: str
    expected: str
    planted: int
    removed: int
    repaired_exact: int | None = None
    unjudged: int = 0  # kept with lines removed by the line filters: not compared with the original

    @property
    def rate(self) -> float:
        """Recall (removed / planted) for kinds to drop; kept rate for kinds to keep."""
        done = self.removed if self.expected == "drop" else self.planted - self.removed
        return _rate(done, self.planted)

    def to_dict(self) -> dict:
        """Plain values, with the rate and, for repairable mojibake, the exactly repaired fraction."""
        out = {**asdict(self), "rate": self.rate}
        if self.repaired_exact is not None:
            out["repaired_rate"] = self.repaired_rate
        return out

    @property
    def repaired_rate(self) -> float:
        """Exactly repaired / planted, leaving out the documents the line filters changed."""
        return _rate(self.repaired_exact or 0, self.planted - self.unjudged)


@dataclass(frozen=True)
class CleanScore:
    """Clean documents of one language, or of one genre in it (no defect, ingest ok), and how many a stage
    lost (dropped with no planted copy of them kept)."""

    lang: str
    clean: int
    dropped: int
    genre: str = ""

    @property
    def rate(self) -> float:
        """Fraction of the clean documents dropped."""
        return _rate(self.dropped, self.clean)


@dataclass(frozen=True)
class TruthReport:
    """How a stage's output compares with the truth; see score()."""

    kinds: list[KindScore]
    clean: list[CleanScore]
    dup_groups: dict[str, int]
    timestamp_spans: int
    timestamp_spans_left: int
    kept: int
    unknown_ids: int
    keep_f1: float = 0.0
    mojibake_left: int = 0
    mojibake_unjudged: int = 0
    ad_lines: int = 0
    ad_lines_left: int = 0
    pii_values: int = 0
    pii_left: int = 0
    pii_negatives: int = 0
    pii_negatives_changed: int = 0

    @property
    def mojibake_residue(self) -> float:
        """Kept documents planted with mojibake and not restored exactly / documents kept."""
        return _rate(self.mojibake_left, self.kept)

    @property
    def ad_line_recall(self) -> float:
        """Ad lines planted in real passages that are gone from the output (their line removed, or their
        document dropped) / ad lines planted."""
        return _rate(self.ad_lines - self.ad_lines_left, self.ad_lines)

    @property
    def timestamp_residue(self) -> float:
        """Planted timestamp spans still present verbatim in kept documents / spans planted in them."""
        return _rate(self.timestamp_spans_left, self.timestamp_spans)

    def kind(self, name: str) -> KindScore:
        """The score row of one defect (or "ingest:<reason>")."""
        return next(k for k in self.kinds if k.kind == name)

    def to_dict(self) -> dict:
        """JSON-ready form of the whole report."""
        return {
            "kinds": [k.to_dict() for k in self.kinds],
            "clean_dropped": {c.lang: {"clean": c.clean, "dropped": c.dropped, "rate": c.rate}
                              for c in self.clean if not c.genre},
            "clean_dropped_by_genre": {f"{c.lang}/{c.genre}": {"clean": c.clean, "dropped": c.dropped, "rate": c.rate}
                                       for c in self.clean if c.genre},
            "exact_dup_groups": dict(self.dup_groups),
            "timestamp_residue": {
                "planted": self.timestamp_spans, "present": self.timestamp_spans_left, "rate": self.timestamp_residue,
            },
            "kept": self.kept,
            "unknown_ids": self.unknown_ids,
            "keep_f1": self.keep_f1,
            "mojibake_residue": {"present": self.mojibake_left, "rate": self.mojibake_residue},
            "ad_lines": {"planted": self.ad_lines, "present": self.ad_lines_left, "removed_rate": self.ad_line_recall},
            "pii": {"planted": self.pii_values, "present": self.pii_left,
                    "negatives": self.pii_negatives, "negatives_changed": self.pii_negatives_changed},
        }

    def format_table(self) -> str:
        """An aligned plain-text summary."""
        rows = []
        for k in self.kinds:
            label = "recall" if k.expected == "drop" else "kept"
            extra = "" if k.repaired_exact is None else f"  repaired {k.repaired_rate:.3f}"
            rows.append((k.kind, str(k.planted), str(k.removed), k.expected, f"{label} {k.rate:.3f}{extra}"))
        lines = _table(("kind", "planted", "removed", "expected", "score"), rows, "lrrll")
        lines += ["", "clean documents wrongly dropped"]
        clean_rows = [(c.lang, c.genre or "(all)", str(c.clean), str(c.dropped), f"{c.rate:.3f}") for c in self.clean]
        lines += _table(("lang", "genre", "clean", "dropped", "rate"), clean_rows, "llrrr")
        g = self.dup_groups
        lines += [
            "",
            f"exact-duplicate groups: {g['groups']}  exactly one kept: {g['exactly_one']}  "
            f"none kept: {g['none_kept']}  several kept: {g['several_kept']}",
            f"timestamp residue: {self.timestamp_spans_left} of {self.timestamp_spans} planted spans still present "
            f"({self.timestamp_residue:.3f})",
            f"mojibake residue: {self.mojibake_left} kept documents with mojibake not restored exactly "
            f"({self.mojibake_residue:.3f} of the kept)"
            + (f"; {self.mojibake_unjudged} more changed by the line filters, not compared" if self.mojibake_unjudged
               else ""),
            *([f"ad lines in real passages: {self.ad_lines} planted, {self.ad_lines - self.ad_lines_left} removed "
               f"with their line or document ({self.ad_line_recall:.3f})"] if self.ad_lines else []),
            *([f"personal data in kept documents: {self.pii_left} of {self.pii_values} planted values still present; "
               f"look-alikes changed: {self.pii_negatives_changed} of {self.pii_negatives}"]
              if self.pii_values or self.pii_negatives else []),
            f"documents kept: {self.kept}  ids not in the truth: {self.unknown_ids}  keep-F1: {self.keep_f1:.3f}",
        ]
        return "\n".join(lines)


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]], align: str) -> list[str]:
    """Lines of a plain-text table; align holds "l" or "r" per column."""
    widths = [max(len(x) for x in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        padded = (c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align, strict=True))
        return "  ".join(padded).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


DUPLICATE_DEFECTS = ("exact_dup", "near_dup")


def _duplicate_roots(truth: list[TruthRecord]) -> dict[str, str]:
    """source_id -> the original its planted exact or near copy was made from (itself for the rest)."""
    return {r.source_id: (r.dup_of if r.dup_of and set(r.defects) & set(DUPLICATE_DEFECTS) else r.source_id)
            for r in truth}


def keep_f1(truth: list[TruthRecord], kept: dict[str, str]) -> float:
    """F1 of keeping what a perfect pipeline keeps, once per duplicate cluster.

    An original and its planted exact and near copies are one unit: keeping any one member of a
    unit to keep is a hit, keeping none a miss, and every further member kept, like every kept
    record a perfect pipeline drops, a false keep.
    """
    root_of = _duplicate_roots(truth)
    expected = {r.source_id: r.expected == "keep" for r in truth}
    members_kept: Counter[str] = Counter(root_of[r.source_id] for r in truth if r.source_id in kept)
    hits = misses = false_keeps = 0
    for root in set(root_of.values()):
        count = members_kept.get(root, 0)
        if expected.get(root, False):
            hits += count > 0
            misses += count == 0
            false_keeps += max(count - 1, 0)
        else:
            false_keeps += count
    return 2 * hits / (2 * hits + false_keeps + misses) if hits else 0.0


def score(truth: list[TruthRecord], kept: dict[str, str], line_filtered: Collection[str] = ()) -> TruthReport:
    """Compare `kept` (source_id -> text of every document left in a stage's output) with the truth.

    ``line_filtered``: the source_ids of documents whose lines clean's line filters removed; a planted mojibake
    document among them that does not match its original is not judged (only the original's hash is known).

    A record counts as removed when its source_id is absent from `kept`; an original to keep (clean, or with a
    defect to keep) counts as lost only when neither it nor any planted copy of it was kept (dedup keeps one of them).
    """
    root_of = _duplicate_roots(truth)
    units_kept = {root_of[sid] for sid in kept if sid in root_of}
    planted: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    repaired = mojibake_left = 0
    unjudged: Counter[str] = Counter()
    clean: Counter[tuple[str, str]] = Counter()
    clean_dropped: Counter[tuple[str, str]] = Counter()
    groups: dict[str, list[str]] = defaultdict(list)
    spans = spans_left = ad_lines = ad_lines_left = pii = pii_left = pii_negatives = pii_changed = 0
    for r in truth:
        gone = r.source_id not in kept
        kinds = list(r.defects) if r.ingest == "ok" else [f"ingest:{r.ingest}"]
        for kind in kinds:
            planted[kind] += 1
            # a record to keep that is the original of planted copies is kept when one of its unit is
            removed[kind] += gone if r.expected == "drop" else r.source_id not in units_kept
        if r.ingest == "ok" and not r.defects:
            for key in {(r.lang, ""), (r.lang, r.genre)}:
                clean[key] += 1
                clean_dropped[key] += r.source_id not in units_kept
        if "exact_dup" in r.defects and r.dup_of:
            if not groups[r.dup_of]:
                groups[r.dup_of].append(r.dup_of)
            groups[r.dup_of].append(r.source_id)
        ad_lines += len(r.ad_lines)
        if gone:
            continue
        text = kept[r.source_id]
        if set(r.defects) & set(MOJIBAKE_DEFECTS):
            exact = _sha256(text) == r.orig_sha256
            if not exact and r.source_id in line_filtered:
                unjudged.update(set(r.defects) & set(MOJIBAKE_DEFECTS))
            else:
                repaired += exact and "mojibake_repairable" in r.defects
                mojibake_left += not exact
        if "timestamps" in r.defects:
            spans += len(r.timestamps)
            spans_left += sum(span in text for span in r.timestamps)
        ad_lines_left += sum(line in text for line in r.ad_lines)
        pii, pii_left = pii + len(r.pii), pii_left + sum(value in text for value in r.pii)
        pii_negatives += len(r.pii_negatives)
        pii_changed += sum(value not in text for value in r.pii_negatives)

    order = [*DEFECTS, *(f"ingest:{o}" for o in INGEST_OUTCOMES[1:])]
    kinds = [
        KindScore(
            kind, "keep" if kind in KEEP_DEFECTS else "drop", planted[kind], removed[kind],
            repaired if kind == "mojibake_repairable" else None, unjudged[kind],
        )
        for kind in order
        if planted[kind]
    ]
    # An exact group none of whose members is kept still counts once when a near copy of its original is
    # kept: dedup kept the unit's best copy.
    members_kept = [sum(m in kept for m in members) or int(root_of[original] in units_kept)
                    for original, members in groups.items()]
    dup_groups = {
        "groups": len(members_kept),
        "exactly_one": sum(n == 1 for n in members_kept),
        "none_kept": sum(n == 0 for n in members_kept),
        "several_kept": sum(n > 1 for n in members_kept),
    }
    known = {r.source_id for r in truth}
    return TruthReport(
        kinds=kinds,
        clean=[CleanScore(lang, clean[lang, genre], clean_dropped[lang, genre], genre) for lang, genre in sorted(clean)],
        dup_groups=dup_groups,
        timestamp_spans=spans,
        timestamp_spans_left=spans_left,
        kept=len(kept),
        unknown_ids=sum(sid not in known for sid in kept),
        keep_f1=keep_f1(truth, kept),
        mojibake_left=mojibake_left,
        mojibake_unjudged=sum(unjudged[kind] for kind in MOJIBAKE_DEFECTS),
        ad_lines=ad_lines,
        ad_lines_left=ad_lines_left,
        pii_values=pii,
        pii_left=pii_left,
        pii_negatives=pii_negatives,
        pii_negatives_changed=pii_changed,
    )
