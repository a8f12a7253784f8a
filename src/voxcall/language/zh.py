"""Chinese (Mandarin): the rules of :class:`~voxcall.language.rules.Language`, and its spoken numbers read as digits.

People say a volume in Chinese as 百分之三十 (30 %), 三十 (30, a percentage like any number above 1), 八成
(80 %: 成 counts tenths; 七成五 is 75 %), 零点五 (0.5) or 百分之百 (100 %), with digits mixed in
(百分之30); a model that copies the user's words passes these on unchanged. :func:`arabic` rewrites each
such number in a text into digits ("30%", "30", "80%", "0.5") and leaves everything else as it was, so that
one parser (:func:`~voxcall.tools.builtin.volume.parse_volume`) reads both scripts.

Simplified and traditional characters are both read (两/兩, 点/點: speech-to-text writes either). Whole
numbers are read with the units 十, 百 and 千 (一百零五 is 105, 十五 is 15, 百 alone is 100); a run of bare
digits is read digit by digit (三五 is 35), as are the decimals after 点.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from voxcall.language.rules import Form, Language, Money, SpokenForms, units

__all__ = ["LANGUAGE", "SPOKEN_FORMS", "arabic", "chinese_number"]

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
           "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_WHOLE = "[零〇一二两兩三四五六七八九十百千0-9]+"
_DECIMALS = "[零〇一二两兩三四五六七八九0-9]+"
_NUMBER = f"{_WHOLE}(?:[点點.]{_DECIMALS})?"
_PHRASES = re.compile(f"百分之(?P<percent>{_NUMBER})|(?P<tenths>{_NUMBER})成(?P<hundredths>[一二两兩三四五六七八九])?"
                      f"|(?P<plain>{_NUMBER})")


def _digit(char: str) -> int:
    return int(char) if char.isascii() else _DIGITS[char]


def _whole(text: str) -> int:
    """A whole number written with Chinese digits and units, or with Arabic digits."""
    total = current = 0
    for char in text:
        if char in _UNITS:
            total += (current or 1) * _UNITS[char]  # 十五: a unit with no digit before it counts once
            current = 0
        else:
            current = current * 10 + _digit(char)
    return total + current


def chinese_number(text: str) -> float:
    """The value of one number such as 三十, 一百零五 or 零点五 (Arabic digits may be mixed in). Raises
    ``ValueError`` for a text that is not one number."""
    if re.fullmatch(_NUMBER, text) is None:
        raise ValueError(f"not a number: {text!r}")
    whole, _, decimals = text.replace("点", ".").replace("點", ".").partition(".")
    value = float(_whole(whole))
    if decimals:
        value += float("0." + "".join(str(_digit(char)) for char in decimals))
    return value


def _digits(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


def _rewrite(match: re.Match[str]) -> str:
    if match["percent"] is not None:
        return _digits(chinese_number(match["percent"])) + "%"
    if match["tenths"] is not None:
        hundredths = _DIGITS[match["hundredths"]] if match["hundredths"] else 0  # 七成五: 75 %
        return _digits(chinese_number(match["tenths"]) * 10 + hundredths) + "%"
    return _digits(chinese_number(match["plain"]))


def arabic(text: str) -> str:
    """``text`` with every Chinese number written in digits: 百分之三十 → 30%, 八成 → 80%, 三十 → 30,
    零点五 → 0.5; Arabic numbers and other words are left as they are."""
    return _PHRASES.sub(_rewrite, text)


SPOKEN_FORMS = SpokenForms(
    language="zh",
    operators=MappingProxyType({
        "*": "乘以", "×": "乘以", "x": "乘以", "/": "除以", "÷": "除以", "+": "加", "-": "减", "−": "减",
        "=": "等于",
    }),
    negative="负{n}",
    space="",
    units=units({
        ("%",): Form("百分之{n}"),
        ("°C", "ºC", "℃"): Form("{n}摄氏度"),
        ("°F", "ºF", "℉"): Form("华氏{n}度"),
        ("°", "º"): Form("{n}度"),
        ("km/h", "kph"): Form("每小时{n}公里"),
        ("mph",): Form("每小时{n}英里"),
        ("m/s",): Form("每秒{n}米"),
        ("km",): Form("{n}公里"),
        ("m",): Form("{n}米"),
        ("cm",): Form("{n}厘米"),
        ("mm",): Form("{n}毫米"),
        ("kg",): Form("{n}公斤"),
        ("g",): Form("{n}克"),
        ("mg",): Form("{n}毫克"),
        ("L",): Form("{n}升"),
        ("ml", "mL"): Form("{n}毫升"),
        ("h", "hr", "hrs"): Form("{n}小时"),
        ("min", "mins"): Form("{n}分钟"),
        ("sec", "secs"): Form("{n}秒"),
    }),
    currencies=MappingProxyType({
        "$": Money(Form("{n}美元")),
        "€": Money(Form("{n}欧元")),
        "£": Money(Form("{n}英镑")),
        "¥": Money(Form("{n}元")),
        "￥": Money(Form("{n}元")),
    }),
    scales=MappingProxyType({"万": "万", "亿": "亿"}),
    words=MappingProxyType({"e.g.": "例如", "etc.": "等等", "&": "和"}),
)
"""Chinese (Mandarin), for a Chinese voice such as espeak-ng's ``cmn-latn-pinyin``: 12 × 8 = 96 is 12乘以8等于96."""

LANGUAGE = Language(
    code="zh",
    acknowledgements=("请稍等，我查一下。", "稍等一下，我正在处理。"),
    giving_up="抱歉，我没能想出答案。",
    thinking=("让我想想。", "稍等。"),
    asking="请问{value}是什么？",
    spoken_forms=SPOKEN_FORMS,
    volume_words=MappingProxyType({
        "max": ("最大", "最高", "最响", "满"),
        "half": ("一半", "半", "中等"),
        "min": ("最小", "最低"),
        "mute": ("静音", "关", "关闭"),
    }),
    volume_filler=r"音量|[声聲]音|[把将將请請的吧。，！]|[帮幫]我|[调調设設改](?:到|成|至|为|為)|[设設]置[为為成到]",
    volume_changes=MappingProxyType({
        "调大": "+", "調大": "+", "调高": "+", "調高": "+", "提高": "+", "增加": "+", "加大": "+",
        "调小": "-", "調小": "-", "调低": "-", "調低": "-", "降低": "-", "减少": "-", "減少": "-", "减小": "-",
        "減小": "-",
    }),
    digits=arabic,
)
