"""Personal data in the demo corpus: sentences that hold e-mail addresses, phone numbers, identity and bank card
numbers and public IP addresses (each value made up, with a valid check where the kind has one), and hard negatives
that look like them and must stay (version numbers, ISBNs, prices, coordinates, example addresses, documentation and
private IP ranges, identity and card numbers that fail their check, order and tracking numbers).

Values are written the ways text holds them: grouped with spaces or dashes, after +86, in parentheses, at a line's
end, and in Chinese text sometimes with full-width digits and ``＠``.
"""

from __future__ import annotations

import ipaddress
import random
import string
from datetime import date, timedelta

from common.check_digits import id_check_character, id_check_holds, luhn_holds

_TO_FULL_WIDTH = str.maketrans({**{d: chr(ord(d) + 0xFEE0) for d in string.digits}, "@": "＠"})
_SYLLABLES = ("li", "wang", "zhang", "chen", "liu", "yang", "zhao", "huang", "zhou", "wu", "anna", "mark", "lee",
              "sara", "tom", "kim", "ng", "ross", "vega", "hart")
_TLDS = ("com", "cn", "net", "org", "edu", "io", "de", "co.uk", "com.cn", "edu.cn")

SENTENCES = {
    "zh": {
        "email": ("如对文中数据有疑问，请发邮件至{v}与作者联系。", "读者来信请寄往编辑部邮箱（{v}），我们会尽快回复。",
                  "会议材料已发送到{v}"),
        "phone": ("他把自己的手机号{v}写在了纸条上，请朋友转交。", "办公室的电话是{v}，工作日上午有人接听。",
                  "当晚的值班电话为{v}"),
        "id_number": ("申请表上填写的身份证号码为{v}，与户口簿一致。", "投诉信中附上了身份证号{v}。"),
        "bank_card": ("退款将退回尾号不明的银行卡{v}，请注意查收。", "他在表格里写下了自己的银行卡号{v}"),
        "ip_address": ("日志显示，故障期间有大量请求来自{v}。", "管理员随后封禁了地址{v}，访问恢复正常。"),
    },
    "en": {
        "email": ("Questions about the data can be sent to {v} and will be answered within a week.",
                  "The corresponding author ({v}) shared the raw measurements.", "Send the signed form to {v}"),
        "phone": ("She left her number, {v}, with the front desk before the flight.",
                  "For the tour, call the office at {v} on weekdays.", "The night shift can be reached at {v}"),
        "id_number": ("The scanned form showed the applicant's resident identity number {v} in full.",),
        "bank_card": ("The complaint quoted the card number {v} and asked for a refund.",
                      "He typed the card number {v} into the wrong field"),
        "ip_address": ("The firewall log showed repeated logins from {v} during the night.",
                       "Traffic from {v} was blocked after the third attempt."),
    },
}
NEGATIVE_SENTENCES = {
    "zh": ("本书的ISBN为{v}，由出版社于当年出版。", "升级到{v}版本后，这个问题不再出现。", "示例配置中的地址{v}只用于说明。",
           "这件外套的售价是{v}元，比去年略高。", "测站位于北纬{v}附近。", "表中的编号{v}是虚构的，校验并不成立。"),
    "en": ("The book's ISBN is {v}, listed on the copyright page.", "After upgrading to {v} the warning disappeared.",
           "The manual uses {v} as the address in every example.", "The jacket now sells for {v} in most shops.",
           "The station sits at latitude {v} on the old maps.", "The number {v} in the table is made up and fails its check."),
}


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def email(rng: random.Random) -> str:
    """A made-up e-mail address on a made-up domain (never a reserved example domain)."""
    local = rng.choice(_SYLLABLES) + rng.choice((".", "_", "")) + rng.choice(_SYLLABLES) + _digits(rng, rng.randint(0, 3))
    domain = rng.choice(_SYLLABLES) + rng.choice(("mail", "lab", "press", "uni", "net", "soft"))
    return f"{local}@{domain}.{rng.choice(_TLDS)}"


def mobile(rng: random.Random) -> str:
    """A Chinese mobile number, written one of the ways people write it."""
    number = "1" + rng.choice("3456789") + _digits(rng, 9)
    shape = rng.randrange(5)
    if shape == 1:
        return f"{number[:3]} {number[3:7]} {number[7:]}"
    if shape == 2:
        return f"{number[:3]}-{number[3:7]}-{number[7:]}"
    if shape == 3:
        return f"+86 {number}"
    if shape == 4:
        return f"+86-{number[:3]}-{number[3:7]}-{number[7:]}"
    return number


def landline(rng: random.Random) -> str:
    """A Chinese landline with its area code."""
    area = rng.choice(("010", "021", "020", "025", "0755", "0571", "0731", "0898"))
    local = rng.choice("23456789") + _digits(rng, 7 if len(area) == 3 else rng.choice((6, 7)))
    return f"({area}){local}" if rng.random() < 0.3 else f"{area}-{local}"


def international(rng: random.Random) -> str:
    """A number with a leading + and its country code."""
    code, groups = rng.choice((("1", (3, 3, 4)), ("44", (2, 4, 4)), ("49", (3, 7)), ("33", (1, 2, 2, 2, 2)),
                               ("81", (3, 4, 4)), ("61", (1, 4, 4))))
    parts = [rng.choice("23456789") + _digits(rng, groups[0] - 1), *(_digits(rng, n) for n in groups[1:])]
    return f"+{code} " + " ".join(parts)


def _id_body(rng: random.Random) -> str:
    born = date(1950, 1, 1) + timedelta(days=rng.randrange(55 * 365))
    return f"{rng.randint(110000, 659999)}{born:%Y%m%d}{_digits(rng, 3)}"


def id_number(rng: random.Random) -> str:
    """An 18-character resident identity number whose check character holds."""
    body = _id_body(rng)
    return body + id_check_character(body)


def _luhn_digit(payload: str) -> str:
    return next(d for d in string.digits if luhn_holds(payload + d))


def bank_card(rng: random.Random) -> str:
    """A card number that passes the Luhn check, grouped in fours or not."""
    prefix, length = rng.choice((("62", 16), ("62", 19), ("4", 16), ("5", 16)))
    number = prefix + _digits(rng, length - len(prefix) - 1)
    number += _luhn_digit(number)
    if rng.random() < 0.5:
        return " ".join(number[i:i + 4] for i in range(0, length, 4))
    return number


def public_ip(rng: random.Random) -> str:
    """A global IPv4 host address (a part of three digits, not .0 or .255) or a global unicast IPv6 address."""
    while True:
        if rng.random() < 0.7:
            address = ipaddress.IPv4Address(rng.getrandbits(32))
            if (address.is_global and not address.is_multicast and address.packed[-1] not in (0, 255)
                    and any(part >= 100 for part in address.packed)):
                return str(address)
        else:
            address = ipaddress.IPv6Address((0x2400 + rng.randrange(0x200)) << 112 | rng.getrandbits(96))
            if address.is_global:
                return str(address)


_MAKERS = {"email": (email,), "phone": (mobile, landline, international), "id_number": (id_number,),
           "bank_card": (bank_card,), "ip_address": (public_ip,)}


def _isbn13(rng: random.Random) -> str:
    body = "9787" + _digits(rng, 8)
    check = (10 - sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(body)) % 10) % 10
    digits = body + str(check)
    return digits if rng.random() < 0.5 else f"{digits[:3]}-{digits[3]}-{digits[4:8]}-{digits[8:12]}-{digits[12]}"


def _failing_id(rng: random.Random) -> str:
    body = _id_body(rng)
    wrong = next(c for c in rng.sample("0123456789X", 11) if c != id_check_character(body) and not (
        body[0] in "23456" and c != "X" and luhn_holds(body + c)))  # nor a number the card check would take
    assert not id_check_holds(body + wrong)
    return body + wrong


def _failing_number(rng: random.Random) -> str:
    """An order or card-shaped number that fails the Luhn check."""
    while True:
        number = rng.choice(("62", "4", "2024")) + _digits(rng, 12)
        if not luhn_holds(number):
            return number


def negative(rng: random.Random) -> tuple[int, str]:
    """(index of the NEGATIVE_SENTENCES template, a look-alike that must stay)."""
    template = rng.randrange(6)
    if template == 0:
        return template, _isbn13(rng)
    if template == 1:
        return template, rng.choice((f"{rng.randint(1, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
                                     f"v{rng.randint(1, 4)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"))
    if template == 2:
        return template, rng.choice((f"{rng.choice(_SYLLABLES)}@example.com", f"admin@{rng.choice(_SYLLABLES)}.example",
                                     f"192.0.2.{rng.randint(1, 254)}", f"198.51.100.{rng.randint(1, 254)}",
                                     f"203.0.113.{rng.randint(1, 254)}", f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.1",
                                     f"192.168.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
                                     f"2001:db8::{rng.randint(1, 0xffff):x}", "fe80::1"))
    if template == 3:
        return template, rng.choice((f"{rng.randint(100, 9999)}.{rng.randint(0, 99):02d}", f"{rng.randint(10, 999)}"))
    if template == 4:
        return template, f"{rng.randint(18, 53)}.{_digits(rng, 4)}"
    return template, rng.choice((_failing_id(rng), _failing_number(rng)))


def _insert(rng: random.Random, text: str, sentences: list[str]) -> str:
    """``sentences`` added to the ends of random paragraphs, or as lines of their own."""
    paragraphs = text.split("\n\n")
    for sentence in sentences:
        at = rng.randrange(len(paragraphs))
        glue = "\n" if sentence[-1] not in "。.！？!?" else ("" if paragraphs[at][-1:] in "。！？" else " ")
        paragraphs[at] = paragraphs[at].rstrip() + glue + sentence
    return "\n\n".join(paragraphs)


def plant_pii(rng: random.Random, text: str, lang: str) -> tuple[str, list[str]]:
    """``text`` with two or three sentences that hold personal data of different kinds; the values as written."""
    kinds = rng.sample(sorted(SENTENCES[lang]), rng.randint(2, 3))
    sentences, values = [], []
    for kind in kinds:
        value = rng.choice(_MAKERS[kind])(rng)
        if lang == "zh" and kind != "ip_address" and rng.random() < 0.25:
            value = value.translate(_TO_FULL_WIDTH)
        sentences.append(rng.choice(SENTENCES[lang][kind]).format(v=value))
        values.append(value)
    return _insert(rng, text, sentences), values


def plant_negatives(rng: random.Random, text: str, lang: str) -> tuple[str, list[str]]:
    """``text`` with two or three sentences holding look-alikes of personal data; the look-alikes as written."""
    sentences, values = [], []
    for _ in range(rng.randint(2, 3)):
        template, value = negative(rng)
        sentences.append(NEGATIVE_SENTENCES[lang][template].format(v=value))
        values.append(value)
    return _insert(rng, text, sentences), values
