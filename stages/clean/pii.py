"""Personal data in kept documents: e-mail addresses, phone numbers, resident identity and bank card numbers, public
IP addresses, each found by a compiled pattern and, where the kind has one, its check.

- ``email``: ``local@domain.tld`` with an alphabetic top-level label. Kept: the reserved example domains
  (example.com/.net/.org and the .example, .test, .invalid and .localhost names), a top-level label that is a file
  extension (``logo@2x.png``), an address followed by ``:path`` (an SSH remote such as ``git@host:repo``) and one
  followed by ``.name`` (``x@self.weight.T``: matrix products in code).
- ``phone``: a Chinese mobile number (11 digits from 13-19, optionally after 86, +86 or 0086, in 3-4-4 groups or
  not; not when both groups of four are years: ``175 2019 2020`` is a table row), a Chinese landline with its area
  code (``010-62345678``, ``010 62345678``, ``(0755)2345678``), or an international number written with a leading +
  (9 to 15 digits in groups of one separator style, 11 to 15 unbroken: ``+2147483647`` is a signed integer,
  ``+40.7127837`` a coordinate).
- ``id_number``: an 18-character Chinese resident identity number whose birth date is a real date and whose ISO
  7064 MOD 11-2 check character holds.
- ``bank_card``: 13 to 19 digits in groups of four (or an American Express 4-6-5), or 15 to 19 digits unbroken,
  starting 2-6 (the issuer ranges of payment cards), that pass the Luhn check. A 13-digit run starting 978/979 is
  an ISBN and starts 9 anyway; unbroken 13- and 14-digit runs are left as EAN barcodes and order numbers are, and
  groups that are all years (``2017 2018 2019 2020``) as a table's row.
- ``ip_address``: an IPv4 address that ``ipaddress`` calls global and is not multicast, or an IPv6 address in the
  global unicast range 2000::/3. Private, loopback, link-local, documentation and other reserved ranges stay (they
  teach networking), and so does a dotted quad whose four parts are all under 100 (``1.2.3.4``, ``12.6.2.1``: the
  shape of a version or section number; about 2 % of public addresses look like that and are missed), and so does
  a network written with its prefix length or mask (``2002::/16``, ``130.155.160.0/255.255.240.0``), a network's
  address ending in .0, and a product's version (``Chrome/120.1.2.3``).

Full-width digits, letters and ``＠`` are read as their ASCII forms (position for position, so spans stay the
document's); the full-width colon stays, the colon of a label before its value (``地址：``). One compiled pass over a whole batch finds the lines that hold what some kind cannot do without (an
``@``, a run of digits, a dotted quad, two colons close together); only those lines meet the full patterns.
"""

from __future__ import annotations

import ipaddress
import re
from bisect import bisect_right, insort
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numba
import numpy as np

from common.check_digits import id_check_holds, luhn_holds
from stages.clean.lines import is_digit

PLACEHOLDERS = {
    "email": "<email>",
    "phone": "<phone>",
    "id_number": "<id_number>",
    "bank_card": "<bank_card>",
    "ip_address": "<ip_address>",
}
"""What a replaced span becomes: the same token wherever the kind occurs, so a model learns that a sentence holds an
address, never which."""
KINDS = tuple(PLACEHOLDERS)

# U+FF01..FF5E are ASCII 0x21..0x7E; the full-width colon stays, as the label's colon before a value ("地址：").
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F) if code != 0xFF1A}
_HAS_FULL_WIDTH = re.compile("[\uff01-\uff5e]")  # a full-width form: the line is read as ASCII
_SEPARATOR = "\n\x00\n"  # between a batch's documents: no pattern crosses it

_NOT_BEFORE_NUMBER = r"(?<![0-9A-Za-z+\-])(?<!\d\.)"  # "Tel.139..." and "No.6222..." are numbers, "0.139..." is not
_NOT_AFTER_NUMBER = r"(?![0-9A-Za-z]|[\-.]\d)"
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]*@"
                    r"((?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24}))(?![A-Za-z0-9\-])")
_MOBILE = re.compile(_NOT_BEFORE_NUMBER + r"(?:(?:\+|00)?86[ \-]?|\(\+?86\)[ \-]?)?1[3-9]\d(?:[ \-]?\d{4}){2}"
                     + _NOT_AFTER_NUMBER, re.ASCII)
_LANDLINE = re.compile(_NOT_BEFORE_NUMBER + r"(?:\(0(?:10|2\d|[3-9]\d{2})\)[ \-]?|0(?:10|2\d|[3-9]\d{2})[ \-])"
                       r"[2-9]\d{6,7}(?:-\d{1,5})?" + _NOT_AFTER_NUMBER, re.ASCII)
# Each group taken whole (atomic): a long run of digits is not split every way before the pattern gives up.
_INTERNATIONAL = re.compile(r"(?<![0-9A-Za-z+)])\+[1-9]\d{0,2}(?>[ .\-]?(?:\(\d{1,5}\)|\d{1,5})){2,6}"
                            + _NOT_AFTER_NUMBER, re.ASCII)
_ID_NUMBER = re.compile(r"(?<![0-9A-Za-z])[1-8]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
                        r"\d{3}[\dXx](?![0-9A-Za-z])", re.ASCII)
_CARD = re.compile(_NOT_BEFORE_NUMBER + r"(?:[2-6]\d{3}(?:[ \-]\d{4}){2,3}(?:[ \-]\d{1,3})?|3[47]\d{2}[ \-]\d{6}"
                   r"[ \-]\d{5}|[2-6]\d{14,18})" + _NOT_AFTER_NUMBER, re.ASCII)
_IPV4 = re.compile(r"(?<![0-9A-Za-z.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
                   r"(?![0-9A-Za-z]|\.\d)", re.ASCII)
_IPV6 = re.compile(r"(?<![0-9A-Za-z:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![0-9A-Za-z:])")
_NETWORK_SUFFIX = re.compile(r"/(?:\d{1,3}(?:\.\d{1,3}){3}|\d{1,3})(?![\w/.])", re.ASCII)  # /16, /255.255.240.0
_YEAR_GROUPS = re.compile(r"(?:(?:19|20)\d\d\D)+(?:19|20)\d\d", re.ASCII)  # "2017 2018 2019": a table's years
_EXAMPLE_DOMAINS = ("example.com", "example.net", "example.org")
_EXAMPLE_SUBDOMAINS = tuple("." + domain for domain in _EXAMPLE_DOMAINS)
_RESERVED_TLDS = ("example", "test", "invalid", "localhost")
_FILE_EXTENSIONS = frozenset(["png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "bmp", "ico", "tif", "tiff", "heic",
                              "js", "ts", "css", "html", "htm", "json", "txt", "xml", "yaml", "yml", "zip", "gz",
                              "tar", "pdf", "mp4", "webm", "woff", "woff2", "ttf"])  # .py and .md are countries


@dataclass(frozen=True)
class PiiSpan:
    """One piece of personal data: its kind and characters [start, end) of the document."""

    kind: str
    start: int
    end: int


@dataclass
class PiiResult:
    """What the step did to one document: its text afterwards and each span (positions in that text)."""

    text: str
    spans: list[PiiSpan] = field(default_factory=list)


def count_kinds(spans: list[PiiSpan]) -> Counter[str]:
    """Spans per kind."""
    return Counter(span.kind for span in spans)


def _email_ok(match: re.Match, text: str) -> bool:
    domain, tld = match.group(1).lower(), match.group(2).lower()
    if domain in _EXAMPLE_DOMAINS or domain.endswith(_EXAMPLE_SUBDOMAINS):
        return False
    if tld in _RESERVED_TLDS or tld in _FILE_EXTENSIONS:
        return False
    after = text[match.end():match.end() + 2]
    if after[:1] == "." and after[1:2].isalnum():  # x@self.weight.T: an attribute chain in code, not an address
        return False
    return not (after[:1] == ":" and after[1:2].strip() and after[1:2] not in ",.;")


def _digit_count(span: str) -> int:
    return sum(ch.isdigit() for ch in span)


def _international_ok(match: re.Match, text: str) -> bool:
    number = match.group()
    digits = _digit_count(number)
    separators = set(number[1:]) - set("0123456789()")
    if len(separators) > 1 or number.count(".") == 1:  # +123.45 678.90, +40.7127837: values, not one number's groups
        return False
    return (9 if separators else 11) <= digits <= 15  # +2147483647 unbroken is a signed integer, not a number to call


def _mobile_ok(match: re.Match, text: str) -> bool:
    return not _YEAR_GROUPS.search(match.group())  # "175 2019 2020": a table row


def _card_ok(match: re.Match, text: str) -> bool:
    digits = re.sub(r"\D", "", match.group())
    return 13 <= len(digits) <= 19 and luhn_holds(digits) and not _YEAR_GROUPS.fullmatch(match.group())


def _network(match: re.Match, text: str) -> bool:
    """An address followed by /bits or /mask: a network (routing, a firewall rule), not a host; a path after it
    (http://52.94.236.248/1/index.html) is not that."""
    return _NETWORK_SUFFIX.match(text, match.end()) is not None


def _ipv4_ok(match: re.Match, text: str) -> bool:
    parts = match.group().split(".")
    if parts[-1] == "0" or re.fullmatch(r"[A-Za-z0-9]/", text[match.start() - 2:match.start()]):
        return False  # a network's address; a product's version (Chrome/120.1.2.3)
    address = ipaddress.IPv4Address(match.group())
    return (any(len(part) > 2 for part in parts)  # 12.6.2.1: a section or version number
            and address.is_global and not address.is_multicast and not _network(match, text))


_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def _ipv6_ok(match: re.Match, text: str) -> bool:
    try:
        address = ipaddress.IPv6Address(match.group())
    except ValueError:
        return False
    # not B::C (Perl), MAC addresses, masks, multicast or a network's prefix
    return address in _GLOBAL_UNICAST and address.is_global and not _network(match, text)


_Check = Callable[[re.Match, str], bool]
_FINDERS: tuple[tuple[str, re.Pattern, _Check], ...] = (
    ("email", _EMAIL, _email_ok),
    ("id_number", _ID_NUMBER, lambda m, _: id_check_holds(m.group())),
    ("bank_card", _CARD, _card_ok),
    ("phone", _MOBILE, _mobile_ok),
    ("phone", _LANDLINE, lambda m, _: True),
    ("phone", _INTERNATIONAL, _international_ok),
    ("ip_address", _IPV4, _ipv4_ok),
    ("ip_address", _IPV6, _ipv6_ok),
)


@numba.njit(cache=True, nogil=True)
def _hex_digit(char: int) -> bool:
    return 0x30 <= char <= 0x39 or 0x41 <= char <= 0x46 or 0x61 <= char <= 0x66


@numba.njit(cache=True, nogil=True)
def _candidate_lines(cp: np.ndarray) -> np.ndarray:
    """The [start, end) of each line that holds what some kind cannot do without: an ``@``; a number (digits among
    spaces, dashes, dots, brackets and +) of seven digits or more; a dotted number of four digits and three dots (an
    IPv4 address); two colons with at most four hex digits between (IPv6). Full-width forms count. No other line
    meets the patterns."""
    found = []
    line_start, candidate = 0, False
    digits, dots, last_colon = 0, 0, -10
    for at in range(cp.size + 1):
        char = cp[at] if at < cp.size else 10
        if char == 10:
            if candidate:
                found.append((line_start, at))
            line_start, candidate, digits, dots, last_colon = at + 1, False, 0, 0, -10
            continue
        if candidate:
            continue
        if is_digit(char):
            digits += 1
            candidate = digits >= 7
        elif char in (0x2E, 0xFF0E):
            dots += 1
            candidate = dots >= 3 and digits >= 3  # the fourth part's digits follow
        elif char == 0x40 or char == 0xFF20:
            candidate = True
        elif char == 0x3A:
            candidate = at - last_colon <= 5
            last_colon = at
        elif char not in (0x20, 0x2D, 0x28, 0x29, 0x2B, 0xFF0D, 0xFF08, 0xFF09, 0xFF0B):
            digits, dots = 0, 0
        if last_colon >= 0 and at != last_colon and not _hex_digit(char):
            last_colon = -10
    out = np.empty((len(found), 2), dtype=np.int64)
    for i, (start, end) in enumerate(found):
        out[i, 0], out[i, 1] = start, end
    return out


def find_pii(texts: list[str], kinds: tuple[str, ...] = KINDS) -> list[list[PiiSpan]]:
    """Each text's spans of personal data of ``kinds``, in order and not overlapping (an earlier finder wins: an
    identity number is not also read as a card)."""
    joined = _SEPARATOR.join(texts)
    starts, position = [], 0
    for text in texts:
        starts.append(position)
        position += len(text) + len(_SEPARATOR)
    found: list[list[PiiSpan]] = [[] for _ in texts]
    lines = _candidate_lines(np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)).tolist()
    if not lines:
        return found
    wide = [(start, end) for start, end in lines if _HAS_FULL_WIDTH.search(joined, start, end)]
    if wide:  # full-width forms read as ASCII, on the lines searched
        pieces, position = [], 0
        for line_start, line_end in wide:
            pieces += [joined[position:line_start], joined[line_start:line_end].translate(_FULL_WIDTH)]
            position = line_end
        joined = "".join(pieces) + joined[position:]
    taken: list[tuple[int, int, str]] = []  # spans of ``joined`` already found, in order
    for kind, pattern, check in _FINDERS:
        if kind not in kinds:
            continue
        for line_start, line_end in lines:
            for match in pattern.finditer(joined, line_start, line_end):
                at = bisect_right(taken, (match.start(),))
                overlaps = (at > 0 and taken[at - 1][1] > match.start()) or (
                    at < len(taken) and taken[at][0] < match.end())
                if not overlaps and check(match, joined):
                    insort(taken, (match.start(), match.end(), kind))
    for start, end, kind in taken:
        doc = bisect_right(starts, start) - 1
        found[doc].append(PiiSpan(kind, start - starts[doc], end - starts[doc]))
    return found


def replace_pii(text: str, spans: list[PiiSpan]) -> PiiResult:
    """``text`` with each span replaced by its kind's placeholder; the spans' positions in the result."""
    pieces, placed, position, shift = [], [], 0, 0
    for span in spans:
        placeholder = PLACEHOLDERS[span.kind]
        pieces += [text[position:span.start], placeholder]
        start = span.start + shift
        placed.append(PiiSpan(span.kind, start, start + len(placeholder)))
        shift += len(placeholder) - (span.end - span.start)
        position = span.end
    pieces.append(text[position:])
    return PiiResult("".join(pieces), placed)
