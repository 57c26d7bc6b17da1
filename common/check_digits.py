"""Check digits of the numbers personal data is made of: the Luhn check of payment cards and the ISO 7064 MOD 11-2
check character of Chinese resident identity numbers (GB 11643)."""

from __future__ import annotations

from datetime import date

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)  # 2**(17 - i) mod 11
_ID_CHECK = "10X98765432"  # the check character for each remainder mod 11


def luhn_holds(digits: str) -> bool:
    """The Luhn check of a digit string."""
    total = 0
    for position, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def id_check_character(body: str) -> str:
    """The ISO 7064 MOD 11-2 check character of a resident identity number's first 17 digits."""
    return _ID_CHECK[sum(int(digit) * weight for digit, weight in zip(body, _ID_WEIGHTS, strict=True)) % 11]


def id_check_holds(number: str) -> bool:
    """An 18-character resident identity number with a real birth date and a valid check character."""
    try:
        date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    return id_check_character(number[:17]) == number[17].upper()
