"""Numbers in digits read as Mandarin says them, before a Chinese voice speaks (pure functions)."""

from __future__ import annotations

import pytest

from voxcall.speech.hanzi_numbers import cardinal, digits, say_numbers


@pytest.mark.parametrize(("value", "said"), [
    (0, "零"), (7, "七"), (10, "十"), (15, "十五"), (20, "二十"), (105, "一百零五"), (115, "一百一十五"),
    (1005, "一千零五"), (1050, "一千零五十"), (1200, "一千二百"), (2000, "两千"), (20000, "两万"),
    (100010, "十万零一十"), (1_000_001, "一百万零一"), (10_0000_0000, "十亿"), (3_0000_0500, "三亿零五百"),
])
def test_cardinals(value: int, said: str) -> None:
    assert cardinal(value) == said


def test_a_cardinal_out_of_range_is_refused() -> None:
    for value in (-1, 10**12):
        with pytest.raises(ValueError, match="out of range"):
            cardinal(value)


@pytest.mark.parametrize(("text", "said"), [
    ("把音量调到30%", "把音量调到百分之三十"),
    ("12.5％的概率", "百分之十二点五的概率"),
    ("12乘以8等于96", "十二乘以八等于九十六"),
    ("3.14", "三点一四"),
    ("今天-5度", "今天负五度"),
    ("1,200元", "一千二百元"),
    ("2024年3月", "二零二四年三月"),
    ("定一个7:30的闹钟", "定一个七点三十分的闹钟"),
    ("7:05", "七点零五分"), ("8:00", "八点"), ("2:15", "两点十五分"),
    ("2个苹果", "两个苹果"), ("下午2点", "下午两点"), ("2加2", "二加二"), ("第2", "第二"),
    ("打13800138000", "打一三八零零一三八零零零"),
    ("没有数字", "没有数字"),
])
def test_numbers_in_text(text: str, said: str) -> None:
    assert say_numbers(text) == said


def test_digits() -> None:
    assert digits("110") == "一一零"
