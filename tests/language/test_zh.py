"""Chinese numbers: each form a volume is said in, read as digits; other words left alone."""

from __future__ import annotations

import pytest

from voxcall.language.zh import arabic, chinese_number


@pytest.mark.parametrize(
    ("text", "value"),
    [("三十", 30), ("十五", 15), ("十", 10), ("一百零五", 105), ("百", 100), ("两千", 2000), ("九十九", 99),
     ("三五", 35), ("零", 0), ("零点五", 0.5), ("零點五", 0.5), ("兩百", 200), ("一点二五", 1.25), ("30", 30),
     ("3十", 30)],
)
def test_numbers(text: str, value: float) -> None:
    assert chinese_number(text) == value


@pytest.mark.parametrize("text", ["", "三十个", "点五", "abc"])
def test_a_text_that_is_not_one_number_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a number"):
        chinese_number(text)


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [("百分之三十", "30%"), ("百分之百", "100%"), ("百分之30", "30%"), ("百分之十二点五", "12.5%"), ("八成", "80%"),
     ("七成五", "75%"), ("三十", "30"), ("零点八", "0.8"), ("把音量调到百分之三十五", "把音量调到35%"),
     ("30%", "30%"), ("max", "max"), ("音量", "音量")],
)
def test_arabic_rewrites_numbers_only(text: str, rewritten: str) -> None:
    assert arabic(text) == rewritten
