"""Remove dates, times and date/time fields (with their labels) from Chinese and English text.

What is removed:

* numeric dates ``2023-05-01`` ``2023/5/1`` ``2023.05.01`` ``05/01/2023`` ``1/5/2023``, with an
  optional time (``2023-05-01T12:30:05+08:00``, ``2023-05-01 12:30:05.123``);
* Chinese dates ``2023年5月1日``/``号`` (optionally with a weekday and a time), ``二〇二三年五月一日``,
  and ``5月1日 14:00`` (a month-day counts only with a time or a label);
* English dates ``May 1, 2023``, ``1 May 2023``, ``Monday, May 1st, 2023 14:02``,
  ``Mon, 01 May 2023 12:30:05 GMT``;
* times ``12:30`` ``12:30:05`` ``12：30`` ``08:30 AM`` ``8:30pm`` ``8 a.m.`` ``上午10:30`` ``下午3点20分`` ``10时30分``;
* a label that introduces one of the above, together with it: ``发布时间：`` ``更新于`` ``发表于``
  ``日期：`` ``Posted on`` ``Date:`` ``Last modified:`` ``time:`` ...; behind a label the value may
  also be ``2023年5月``, ``2023-05``, ``20230501``, ``May 2023`` or a month-day;
* brackets that held nothing but the removed span: ``[2023-05-01 12:30:05]`` ``(2023-05-01)``, also
  with a trailing verb: ``（2023-05-01更新）``.

Rules for the ambiguous cases:

* A year alone is never a timestamp (``in 1998``, ``2019年的研究``, ``1990s``, ``2023年度``), nor is a
  month alone (``每年5月都会``) or a month-day without a time or a label (``May 1``, ``5月1日``).
* A time is ``H:MM`` with minutes of two digits and an hour of at most 23, not part of a longer
  ``:``/``.`` chain (``3:2:2:1`` and ``比分3:1`` stay). A time whose hour is one undecorated digit
  (``3:16``) also needs a cue: seconds, AM/PM, a zone or range, 上午/下午/..., a label, or one of
  *at, around, from, to, until, till, by, before, after, since, about, @* right before it. So
  ``John 3:16`` stays while ``at 8:30`` goes; ``John 13:16`` reads as a time and is removed.
* ``3点`` / ``10时`` count only with minutes (``3点20分``), 半/整, a 上午/下午 prefix or a label, so
  ``第3点`` and ``当温度为10时`` stay; durations (``3小时20分钟``, ``10 minutes``) are never touched.
* Numbers glued to a letter, digit, ``.``, ``_``, ``/`` or ``-`` on their left are never the start
  of a timestamp: versions, IP addresses, file names and paths stay. A dotted date right after
  *version*/*release*/``==`` is a version. ``x[10:20]`` (a bracket right after an identifier) is a slice.
* URLs are left alone entirely, even when they contain dates.
* English labels count (and are removed) when followed by a colon or when they start a field (start
  of a line, or after ``|``, ``,``, ``;``, ``.``, a bracket ...): ``Posted on May 1, 2023`` loses the
  label, ``the video was posted on May 1, 2023`` keeps ``posted on``. Bare 时间/日期 follow the same
  rule (a space before them also starts a field); compound Chinese labels (发布时间, 更新于 ...) always
  count, a bare verb (``发布：``) only with a colon.
* Digits are ASCII; full-width digits are expected to be normalised by the text-repair step.

Around each removed span only debris is tidied: a doubled space, a space left before ``,``/``.``,
a separator or full stop doubled by the removal (``张三，⟨ts⟩，北京`` -> ``张三，北京``), a separator
or colon left dangling at the start or end of the line. A line that held only timestamps and such debris is
removed with its line break; every other line and character is kept as it was.
"""

from __future__ import annotations

import re

__all__ = ["scrub_timestamps"]

_SP = r"[ \t\u3000]"
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)(?![A-Za-z])"
)
_MONTH_WORDS = frozenset({
    "Jan", "January", "Feb", "February", "Mar", "March", "Apr", "April", "May", "Jun", "June", "Jul", "July",
    "Aug", "August", "Sep", "Sept", "September", "Oct", "October", "Nov", "November", "Dec", "December",
})
_WEEKDAY_WORDS = frozenset({
    "Mon", "Monday", "Tue", "Tues", "Tuesday", "Wed", "Wednesday", "Thu", "Thur", "Thurs", "Thursday",
    "Fri", "Friday", "Sat", "Saturday", "Sun", "Sunday",
})
_CUE_WORDS = frozenset({"at", "around", "from", "to", "until", "till", "by", "before", "after", "since", "about"})
_PERIODS = frozenset({"上午", "下午", "早上", "早晨", "清晨", "中午", "午后", "傍晚", "晚上", "夜里", "夜间", "凌晨"})
_CN_WEEKDAY = rf"(?:{_SP}*[（(]?(?:星期|周|礼拜)[一二三四五六日天][)）]?)"
_CN_PERIOD = "(?:" + "|".join(sorted(_PERIODS)) + ")"

_CLOCK = r"(?:[01]?\d|2[0-3])[:：][0-5]\d(?:[:：][0-5]\d(?:[.,]\d{1,9})?)?"
_AMPM = rf"{_SP}?[AaPp]\.?[Mm]\.?(?![A-Za-z])"
_TZ = (
    rf"(?:Z|{_SP}?[+-](?:[01]\d|2[0-3]):?[0-5]\d|{_SP}?(?:UTC|GMT)(?:[+-](?:[01]?\d|2[0-3])(?::?[0-5]\d)?)?"
    rf"|{_SP}?(?:[ECMP][SD]T|CES?T|JST|KST|HKT|SGT|BST))(?![A-Za-z0-9])"
)
_CN_CLOCK = rf"(?:[01]?\d|2[0-4])[点时](?:{_SP}?[0-5]?\d分(?!钟)(?:[0-5]?\d秒)?|半|整)?"
_ANY_TIME = (
    rf"(?:{_CN_PERIOD}{_SP}?)?"
    rf"(?:{_CLOCK}(?:{_AMPM})?(?:{_TZ})?|{_CN_CLOCK}|(?:1[0-2]|0?[1-9]){_AMPM})"
    r"(?![0-9]|[:：.][0-9])"
)
_THEN_TIME = rf"(?:(?:T|,?{_SP}+|{_SP}+(?:,{_SP}*|at{_SP}+|@{_SP}*)|@{_SP}*){_ANY_TIME})?"
_CN_THEN_TIME = rf"{_CN_WEEKDAY}?(?:{_SP}*{_ANY_TIME})?"
_MON = r"(?:1[0-2]|0?[1-9])"
_DAY = r"(?:3[01]|[12]\d|0?[1-9])"

_AFTER_MONTH = "|".join(
    rf"(?<={word}{dot} [0-9]{{4}})" for word in sorted(_MONTH_WORDS) for dot in ("", r"\.") if not dot or len(word) <= 4
)

# Every candidate starts at an ASCII digit that is not glued to a word, number, path or version on
# its left; the first digit is matched once, so each branch below spells the rest of its form.
# The empty group closing each branch names the form.
_CORE = re.compile(
    r"[0-9](?<![0-9A-Za-z_./\-][0-9])(?<![0-9][:：][0-9])(?:"
    r"\d{3}(?:"
    rf"(?P<ys>[-/.]){_MON}(?P=ys){_DAY}(?![0-9]|[-/.][0-9]){_THEN_TIME}(?P<ymd>)"  # 2023-05-01, 2023/5/1 12:30
    rf"|{_SP}*年{_SP}*{_MON}{_SP}*月(?:"
    rf"{_SP}*{_DAY}{_SP}*[日号]{_CN_THEN_TIME}(?P<cymd>)"  # 2023年5月1日 08:30
    rf"|(?!{_SP}*[0-9])(?P<cym>))"  # 2023年5月
    rf"|[-/.]{_MON}(?![0-9]|[-/.:][0-9])(?P<ym>)"  # 2023-05
    r"|(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
    r"(?:T?(?:[01]\d|2[0-3])[0-5]\d(?:[0-5]\d)?)?(?![0-9])(?P<ymd8>)"  # 20230501, 20230501T1230
    rf"|(?![0-9])(?:{_AFTER_MONTH})(?P<year>)"  # (May) 2023
    r")|\d?(?:"
    rf"(?P<ds>[-/.])\d{{1,2}}(?P=ds)\d{{4}}(?![0-9]|[-/.][0-9]){_THEN_TIME}(?P<mdy>)"  # 05/01/2023
    rf"|{_SP}*月{_SP}*{_DAY}{_SP}*[日号]{_CN_WEEKDAY}?(?:{_SP}*(?P<cmd_time>{_ANY_TIME}))?(?P<cmd>)"  # 5月1日 14:00
    rf"|(?:st|nd|rd|th)?{_SP}+{_MONTH}\.?,?{_SP}+\d{{4}}(?![0-9]){_THEN_TIME}(?P<dmy>)"  # 1 May 2023
    rf"|(?:st|nd|rd|th)?,?{_SP}+\d{{4}}(?![0-9]){_THEN_TIME}(?P<dy>)"  # (May) 1, 2023
    rf"|[:：][0-5]\d(?P<sec>[:：][0-5]\d(?:[.,]\d{{1,9}})?)?(?P<ap>{_AMPM})?"
    rf"(?P<tz>{_TZ}|[-–~]{_SP}?(?:[01]?\d|2[0-3])[:：][0-5]\d)?(?![0-9]|[:：.][0-9])(?P<hms>)"  # 12:30:05 PM
    rf"|[点时](?P<min>{_SP}?[0-5]?\d分(?!钟)(?:[0-5]?\d秒)?|半|整)?(?P<cnclock>)"  # 3点20分
    rf"|{_AMPM}(?P<ampm>)"  # 8 pm
    r"))",
    re.ASCII,
)

_CN_NUM = "〇零一二三四五六七八九"
_CN_DATE = re.compile(
    rf"[{_CN_NUM}](?<![{_CN_NUM}十][{_CN_NUM}])[{_CN_NUM}]{{3}}年"
    r"(?:十[一二]?|[一二三四五六七八九])月"
    r"(?:三十一?|二十[一二三四五六七八九]?|十[一二三四五六七八九]?|[一二三四五六七八九])[日号]"
    rf"{_CN_THEN_TIME}"
)

_DIGITS = "0123456789"
_NUM = re.compile(r"[0-9]+")
_URL = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*://|www\.)[^\s<>\"'，。、；！？（）【】《》「」]+")

_VERSION_BEFORE = re.compile(rf"(?:(?<![A-Za-z])(?:version|ver\.?|release|v){_SP}*|=={_SP}*)\Z", re.I)

_CN_VERBS = frozenset({
    "发布", "发表", "更新", "修改", "编辑", "创建", "上传", "提交", "回复", "录入", "撰写", "出版", "公布", "刊登",
    "采集", "抓取", "入库", "生成", "报道", "发帖", "访问",
})
_CN_FIELDS = frozenset({"开始", "结束", "截止", "会议", "活动", "打印", "下载"})
_CN_LABEL_HEADS = _CN_VERBS | _CN_FIELDS
_CN_RECENT = frozenset({"最后", "最近"})
_EN_NOUN_LABELS = frozenset({"date", "time", "timestamp", "datestamp"})
_EN_QUALIFIERS = frozenset({
    "release", "publication", "published", "post", "posted", "upload", "creation", "modification", "modified",
    "update", "updated", "last", "access", "retrieval", "due", "start", "end",
})
_EN_VERB_LABELS = frozenset({
    "posted", "published", "updated", "modified", "edited", "created", "submitted", "retrieved", "accessed",
    "uploaded", "revised", "changed", "generated",
})
_EN_VERB_QUALIFIERS = frozenset({"last"})
_FIELD_BREAK = frozenset("\n\r|,;，；、•·([{（【<>.!?。！？:：*#-–—")

_YEAR_FIRST = frozenset({"ymd", "cymd", "cym", "ym", "ymd8", "year"})
_LABEL_ONLY = frozenset({"cym", "ym", "ymd8"})
_PAIRS = {"(": ")", "（": "）", "[": "]", "【": "】"}
_CLOSERS = frozenset(_PAIRS.values())
_BLANKS = " \t\u3000"
_SEPS = ",，;；|、·•"
_DASHES = "-–—"
_COLONS = ":："
_JOINERS = frozenset({"", "-", "–", "—", "~", "～", "至", "到", "to"})
_DEBRIS = _BLANKS + "\r" + _SEPS + _DASHES + _COLONS + ".。"


def _skip_blanks(text: str, i: int) -> int:
    while i > 0 and text[i - 1] in _BLANKS:
        i -= 1
    return i


def _skip_blanks_right(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _BLANKS:
        i += 1
    return i


def _word_before(text: str, i: int) -> tuple[str, int]:
    """The run of ASCII letters that ends at ``i``, and where it starts."""
    j = i
    while j > 0 and text[j - 1].isascii() and text[j - 1].isalpha():
        j -= 1
    return text[j:i], j


def _month_start(text: str, s: int) -> int | None:
    """Start of ``[Weekday[,]] Month[.] `` right before ``s``, or None when no month name is there."""
    k = _skip_blanks(text, s)
    if k == s:
        return None
    if k > 0 and text[k - 1] == ".":
        k -= 1
    month, j = _word_before(text, k)
    if month not in _MONTH_WORDS:
        return None
    return _weekday_start(text, j)


def _weekday_start(text: str, s: int) -> int:
    """Start of ``Weekday[.][,] `` right before ``s``, or ``s`` when there is none."""
    k = _skip_blanks(text, s)
    if k == s:
        return s
    if k > 0 and text[k - 1] == ",":
        k -= 1
    if k > 0 and text[k - 1] == ".":
        k -= 1
    day, j = _word_before(text, k)
    return j if day in _WEEKDAY_WORDS else s


def _has_cue(text: str, s: int) -> bool:
    """Whether a time cue word (``at``, ``from`` ...) or ``@`` comes right before ``s``."""
    k = _skip_blanks(text, s)
    if k > 0 and text[k - 1] == "@":
        return True
    return k < s and _word_before(text, k)[0].lower() in _CUE_WORDS


def _field_start(text: str, i: int, space_breaks: bool) -> bool:
    """Whether position ``i`` starts a field: line start, or after a separator (or a space)."""
    k = _skip_blanks(text, i)
    return k == 0 or text[k - 1] in _FIELD_BREAK or (space_breaks and k < i)


def _en_label(text: str, k: int) -> int | None:
    """Start of an English label (``Posted on``, ``Last modified``, ``Release date`` ...) ending at ``k``."""
    word, j = _word_before(text, k)
    if word.lower() in ("on", "at"):
        word, j = _word_before(text, _skip_blanks(text, j))
    word = word.lower()
    if word in _EN_NOUN_LABELS:
        extra = _EN_QUALIFIERS
    elif word in _EN_VERB_LABELS:
        extra = _EN_VERB_QUALIFIERS
    else:
        return None
    before = _skip_blanks(text, j)
    qualifier, q = _word_before(text, before)
    return q if before < j and qualifier.lower() in extra else j


def _cn_label(text: str, k: int, colon: bool) -> tuple[int, bool] | None:
    """Start of a Chinese label ending at ``k``, and whether it is a bare 时间/日期/时间戳."""
    if text[max(0, k - 3) : k] == "时间戳":
        return k - 3, True
    tail = text[max(0, k - 2) : k]
    if tail in ("时间", "日期"):
        verb_end = k - 2
        if text[max(0, k - 4) : verb_end] not in _CN_LABEL_HEADS:
            return verb_end, True
    elif tail[-1:] == "于" and text[max(0, k - 3) : k - 1] in _CN_VERBS:
        verb_end = k - 1
    elif colon and tail in _CN_VERBS:
        verb_end = k
    else:
        return None
    j = verb_end - 2
    return (j - 2 if text[max(0, j - 2) : j] in _CN_RECENT else j), False


def _label_start(text: str, start: int) -> int | None:
    """Where the label that introduces the timestamp at ``start`` begins, if one does."""
    k = _skip_blanks(text, start)
    colon = k > 0 and text[k - 1] in ":：="
    if colon:
        k = _skip_blanks(text, k - 1)
    if k < 1:
        return None
    if text[k - 1].isascii():
        label = _en_label(text, k)
        if label is None:
            return None
        return label if colon or _field_start(text, label, space_breaks=False) else None
    found = _cn_label(text, k, colon)
    if found is None:
        return None
    label, bare = found
    return label if not bare or colon or _field_start(text, label, space_breaks=True) else None


def _year_ok(year: int) -> bool:
    return 1000 <= year <= 2999


def _after_version(text: str, s: int) -> bool:
    return _VERSION_BEFORE.search(text, max(0, s - 12), s) is not None


def _with_label(text: str, start: int, end: int, required: bool) -> tuple[int, int] | None:
    """``(start, end)`` widened to the label before it; None when a required label is missing."""
    label = _label_start(text, start)
    if label is not None:
        return label, end
    return None if required else (start, end)


def _accept(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """The span to remove for a candidate match (widened to its prefix and label), or None."""
    kind = m.lastgroup
    s, e = m.span()
    if kind in _YEAR_FIRST:
        if not _year_ok(int(text[s : s + 4])):
            return None
        if kind == "year":
            month = _month_start(text, s)
            return None if month is None else _with_label(text, month, e, required=True)
        if kind == "ymd" and m.group("ys") == "." and _after_version(text, s):
            return None
        return _with_label(text, s, e, required=kind in _LABEL_ONLY)

    nums = _NUM.findall(m.group())
    first = int(nums[0])
    if kind == "mdy":
        second = int(nums[1])
        if not (1 <= first <= 31 and 1 <= second <= 31 and min(first, second) <= 12 and _year_ok(int(nums[2]))):
            return None
        if m.group("ds") == "." and _after_version(text, s):
            return None
        return _with_label(text, s, e, required=False)
    if kind == "cmd":
        if not 1 <= first <= 12:
            return None
        return _with_label(text, s, e, required=m.group("cmd_time") is None)
    if kind == "dmy" or kind == "dy":
        if not (1 <= first <= 31 and _year_ok(int(nums[1]))):
            return None
        if kind == "dmy":
            return _with_label(text, _weekday_start(text, s), e, required=False)
        month = _month_start(text, s)
        return None if month is None else _with_label(text, month, e, required=False)

    if kind == "hms":
        if first > 23:
            return None
        weak = len(nums[0]) == 1 and not (m.group("sec") or m.group("ap") or m.group("tz"))
    elif kind == "cnclock":
        if first > 24:
            return None
        weak = m.group("min") is None
    else:
        if not 1 <= first <= 12:
            return None
        weak = False
    if s > 1 and text[s - 1] == "[" and (text[s - 2].isalnum() or text[s - 2] in "_)]"):
        return None
    start = s
    period = s - 1 if s > 0 and text[s - 1] in _BLANKS else s
    if text[max(0, period - 2) : period] in _PERIODS:
        start = period - 2
        weak = False
    elif weak and _has_cue(text, s):
        weak = False
    return _with_label(text, start, e, required=weak)


def _find_spans(text: str) -> list[tuple[int, int]]:
    """Merged, sorted spans of every timestamp (with prefix and label) outside URLs."""
    urls = [u.span() for u in _URL.finditer(text)] if ("://" in text or "www." in text) else []
    found: list[tuple[int, int]] = []
    for rx in (_CORE, _CN_DATE):
        if rx is _CN_DATE and not ("年" in text and "月" in text):
            continue
        pos = 0
        while (m := rx.search(text, pos)) is not None:
            s = m.start()
            if urls:
                url_end = next((ue for us, ue in urls if us <= s < ue), None)
                if url_end is not None:
                    pos = url_end
                    continue
            if rx is _CORE:
                span = _accept(text, m)
            else:
                label = _label_start(text, s)
                span = (s if label is None else label, m.end())
            if span is None:
                pos = s + 1
                continue
            start, end = span
            if text[end : end + 2] in _CN_VERBS and text[end + 2 : end + 3] in _CLOSERS:
                end += 2
            found.append((start, end))
            pos = m.end()
    found.sort()
    merged: list[tuple[int, int]] = []
    for s, e in found:
        if merged and (s <= merged[-1][1] or text[merged[-1][1] : s].strip(_BLANKS) in _JOINERS):
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def _starts_with_sep(right: str) -> bool:
    if not right:
        return False
    if right[0] in _DASHES:
        return len(right) == 1 or right[1] in _BLANKS
    return right[0] in _SEPS


def _ends_with_sep(left: str) -> bool:
    if not left:
        return False
    if left[-1] in _DASHES:
        return len(left) > 1 and left[-2] in _BLANKS
    return left[-1] in _SEPS


def _drop_last_newline(done: list[str]) -> None:
    for i in range(len(done) - 1, -1, -1):
        if done[i]:
            if done[i].endswith("\n"):
                done[i] = done[i][:-2] if done[i].endswith("\r\n") else done[i][:-1]
            return


def _remove(text: str, spans: list[tuple[int, int]]) -> tuple[str, int]:
    """Cut ``spans`` out of ``text``, tidying the debris each cut leaves on its line."""
    n = len(text)
    done: list[str] = []
    line = ""
    pos = 0
    count = 0
    for s, e in spans:
        if e <= pos:
            continue
        s = max(s, pos)
        while True:
            before, after = _skip_blanks(text, s), _skip_blanks_right(text, e)
            if before <= pos or after >= n or _PAIRS.get(text[before - 1]) != text[after]:
                break
            s, e = before - 1, after + 1
        count += 1
        chunk = text[pos:s]
        nl = chunk.rfind("\n")
        if nl >= 0:
            done.append(line)
            done.append(chunk[: nl + 1])
            line = chunk[nl + 1 :]
        else:
            line += chunk
        le = text.find("\n", e)
        if le < 0:
            le = n
        right = text[e:le]
        left_core = line.rstrip(_BLANKS)
        right_core = right.lstrip(_BLANKS)
        lw = len(line) - len(left_core)
        rw = len(right) - len(right_core)

        if not left_core.strip(_DEBRIS) and not right_core.strip(_DEBRIS):
            line = ""
            if le < n:
                pos = le + 1
            else:
                pos = n
                _drop_last_newline(done)
            continue

        pos = e + rw
        if not left_core:
            if _starts_with_sep(right_core) or right_core[0] in _COLONS:
                pos = _skip_blanks_right(text, pos + 1)
        elif not right_core.strip("\r"):
            line = left_core
            if _ends_with_sep(line) or line[-1] in _COLONS:
                line = line[:-1].rstrip(_BLANKS)
        elif (_ends_with_sep(left_core) or left_core[-1] in _COLONS) and _starts_with_sep(right_core) and not (
            right_core[0] == "|" and left_core.lstrip(_BLANKS).startswith("|")
        ):
            if left_core[-1] in _COLONS:
                line = left_core[:-1]
            else:
                pos = _skip_blanks_right(text, pos + 1)
        elif left_core[-1] in ".。!?！？" and right_core[0] in ".。":
            line = left_core
            pos += 1
        elif lw and rw:
            pass
        elif lw and right_core[0] in ",.;:!?)]}":
            line = left_core
        else:
            pos = e
    done.append(line)
    done.append(text[pos:])
    return "".join(done), count


def scrub_timestamps(text: str) -> tuple[str, int]:
    """Return ``text`` without its dates, times and date/time fields, and how many spans were removed.

    Text without an ASCII digit or a ``年``/``月`` pair is returned as is at once.
    """
    if not ("年" in text and "月" in text) and not any(digit in text for digit in _DIGITS):
        return text, 0
    spans = _find_spans(text)
    if not spans:
        return text, 0
    return _remove(text, spans)
