"""Numbers written in digits, read as Mandarin says them: ``30%`` → 百分之三十, ``3.5`` → 三点五, 2024年 → 二零二四年.

A Chinese voice reads characters, not digits (its front end turns each character into pinyin), so digits are read
first, the way :mod:`~voxcall.speech.spoken_forms` leaves them for the voice to do. Rules, in order:

- a year (four digits before 年) is read digit by digit: 2024年 → 二零二四年;
- a clock time ``H:MM`` is 点 and 分: 3:30 → 三点三十分, 7:05 → 七点零五分, 8:00 → 八点;
- a number before ``%`` is a percentage: 30% → 百分之三十, 12.5% → 百分之十二点五;
- any other number is a cardinal with its decimals read digit by digit: 105 → 一百零五, 3.14 → 三点一四,
  -5 → 负五, 1,200 → 一千二百 (thousands separators are dropped); ten to nineteen at the start drop the 一
  (十五, but 一百一十五); a bare 2 before a measure word is 两 (两个, 两点), as is a leading 2 before 千, 万, 亿.

Numbers of eleven digits or more (phone numbers, codes) are read digit by digit. Pure functions, no data files.
"""

from __future__ import annotations

import re

__all__ = ["cardinal", "digits", "say_numbers"]

DIGITS = "零一二三四五六七八九"
_SMALL_UNITS = ("", "十", "百", "千")
_GROUP_UNITS = ("", "万", "亿")
_MAX_CARDINAL_DIGITS = 10
"""Longer digit runs are read digit by digit: a mobile number has eleven."""
_MEASURE_WORDS = frozenset("个点次天年月周位只件本张杯首条台分秒岁块元斤米层遍")
"""Words after which a bare 2 is 两 (两个, 两点); 小时 and 分钟 start with 小 and 分."""

_NUMBER = re.compile(
    r"(?P<year>(?<!\d)\d{4}(?=年))"
    r"|(?P<clock>(?<![\d.])(?P<hour>[01]?\d|2[0-4]):(?P<minute>[0-5]\d)(?![\d:]))"
    r"|(?:(?<!\d)(?P<sign>[-−]))?(?P<number>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<decimals>\d+))?(?P<percent>\s?[%％])?")


def digits(text: str) -> str:
    """``text``'s digits read one by one: 110 → 一一零."""
    return "".join(DIGITS[int(digit)] for digit in text)


def _below_ten_thousand(value: int) -> str:
    """1 to 9999 with 零 for each run of missing places inside it: 1005 → 一千零五, 1050 → 一千零五十."""
    said, pending_zero = "", False
    for place in range(3, -1, -1):
        digit = value // 10**place % 10
        if digit == 0:
            pending_zero = bool(said)
            continue
        if pending_zero:
            said += "零"
            pending_zero = False
        said += DIGITS[digit] + _SMALL_UNITS[place]
    return said


def cardinal(value: int) -> str:
    """``value`` (0 ≤ value < 10**12) as a Mandarin count: 0 → 零, 15 → 十五, 20000 → 两万, 100010 → 十万零一十."""
    if value < 0 or value >= 10**12:
        raise ValueError(f"{value} is out of range for a cardinal")
    if value == 0:
        return DIGITS[0]
    groups = []
    rest = value
    while rest:
        groups.append(rest % 10_000)
        rest //= 10_000
    said = ""
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if group == 0:
            continue
        if said and (group < 1000 or groups[index + 1] == 0):
            said += "零"  # a place is missing between this group and the last one said
        said += _below_ten_thousand(group) + _GROUP_UNITS[index]
    if said.startswith("一十"):
        said = said[1:]
    if said[0] == "二" and len(said) > 1 and said[1] in "千万亿":
        said = "两" + said[1:]
    return said


def _number(match: re.Match[str], following: str) -> str:
    """A matched number as said; ``following`` is the text right after it (for 两)."""
    if match["year"]:
        return digits(match["year"])
    if match["clock"]:
        hour, minute = int(match["hour"]), int(match["minute"])
        said = ("两" if hour == 2 else cardinal(hour)) + "点"
        if minute:
            said += ("零" + DIGITS[minute] if minute < 10 else cardinal(minute)) + "分"
        return said
    number = match["number"].replace(",", "")
    if len(number) > _MAX_CARDINAL_DIGITS:
        return digits(number)
    said = cardinal(int(number))
    if said == "二" and not match["decimals"] and not match["percent"] and following[:1] in _MEASURE_WORDS:
        said = "两"
    if match["decimals"]:
        said += "点" + digits(match["decimals"])
    if match["sign"]:
        said = "负" + said
    return "百分之" + said if match["percent"] else said


def say_numbers(text: str) -> str:
    """``text`` with every number in digits read in Mandarin (see the module's docstring); the rest is kept."""
    return _NUMBER.sub(lambda match: _number(match, text[match.end():]), text)
