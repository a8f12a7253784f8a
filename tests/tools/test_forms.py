"""The form a description prescribes for a date or a time: found, turned into a grammar, and given its width."""

from __future__ import annotations

from typing import Any

import pytest

from voxcall.llm.local.grammar import gbnf_literal
from voxcall.tools import Tool
from voxcall.tools.forms import form_rule, forms_of, padded, shaped_spans
from voxcall.tools.validation import ArgumentError, validate_arguments


def described(text: str) -> dict[str, Any]:
    return {"type": "string", "description": text}


def test_placeholders_become_fields_and_separators_stay() -> None:
    assert forms_of(described("The date, in the format 'YYYY-MM-DD'.")) == [(4, "-", 2, "-", 2)]
    assert forms_of(described("Formatted as 'YYYY-MM-DD to YYYY-MM-DD'.")) == [(4, "-", 2, "-", 2, " to ", 4, "-",
                                                                                2, "-", 2)]
    assert forms_of(described("When, as \"YYYY-MM-DDTHH:mm:ssZ\".")) == [(4, "-", 2, "-", 2, "T", 2, ":", 2, ":", 2,
                                                                          "Z")]
    assert forms_of(described("A date, 'YYYY-MM-DD' or 'MM/DD/YYYY'; 'YYYY-MM-DD' is best.")) == [
        (4, "-", 2, "-", 2), (2, "/", 2, "/", 4)]


def test_no_form_without_placeholders_alone_in_quotes() -> None:
    for text in ("The date, for example '2023-10-01'.", "The day, as 'DD MMM'.", "The mode, 'fast' or 'safe'.",
                 "A month, 'MM'.", "The date in the format YYYY-MM-DD."):  # unquoted: where it ends is unsure
        assert forms_of(described(text)) == [], text
    assert forms_of({"type": "integer", "description": "The year, 'YYYY'."}) == []
    assert forms_of({"type": "string", "description": "The day, 'YYYY-MM-DD'.", "enum": ["2024-1-1"]}) == []
    assert forms_of({"type": "string"}) == [] and forms_of(None) == []


def test_the_rule_takes_one_or_two_digits_a_field_and_the_dialects_quotes() -> None:
    rule = form_rule(described("The date, in the format 'YYYY-MM-DD'."), "''", gbnf_literal)
    assert rule == '"\'" (([0-9] [0-9] [0-9] [0-9] "-" [0-9] [0-9]? "-" [0-9] [0-9]?)) "\'"'
    json_rule = form_rule(described('Start time in "HH:mm" (24 hours).'), '""', gbnf_literal)
    assert json_rule == '"\\"" (([0-9] [0-9]? ":" [0-9] [0-9]?)) "\\""'
    assert form_rule(described("The mode."), "''", gbnf_literal) is None


@pytest.mark.parametrize(("sample", "text", "spans"), [
    ("in the format of 'Latitude, Longitude', such as '36.2522, -105.3437'",  # the 0.5B model wrote 'text'
     "a customer located at 34.0522, -118.2437? Let's use a base price of $100", ["34.0522, -118.2437"]),
    ("The host, e.g. '192.168.1.1'", "Add the server at 10.0.0.15.", ["10.0.0.15"]),
    ("A time like '18:30'", "at 6:30 pm, or else at 19:45", ["19:45"]),  # 6:30 is no 24-hour time: the model's
    ("The date, for example '2023-04-15'", "on 2023-10-01 or 2023-1-2, or on 2023-10-01", ["2023-10-01"]),
    ("The version, such as '1.2.0'", "upgrade to version 1.10.3 please", ["1.10.3"]),
])
def test_a_span_shaped_as_a_quoted_sample_is_found(sample: str, text: str, spans: list[str]) -> None:
    assert shaped_spans(described(sample), text) == spans


def test_no_shape_without_a_numeric_sample() -> None:
    for text in ("The date, in the format 'YYYY-MM-DD'.", "A city, such as 'Paris'.", "A number, '42'.",
                 "The room, 'B12-3'."):  # letters, or a single number, show no shape
        assert shaped_spans(described(text), "on 2023-10-01 in Paris, room B12-3, number 42") == [], text
    assert shaped_spans({"type": "string", "description": "'1.2.0'", "enum": ["1.2.0"]}, "1.2.0") == []
    assert shaped_spans({"type": "integer", "description": "'1.2.0'"}, "1.2.0") == []


def test_a_value_in_the_form_gets_its_width() -> None:
    days = described("The date range, formatted as 'YYYY-MM-DD to YYYY-MM-DD'.")
    assert padded("2023-10-1 to 2023-10-7", days) == "2023-10-01 to 2023-10-07"
    assert padded("2023-10-01 to 2023-10-07", days) == "2023-10-01 to 2023-10-07"
    assert padded("last week", days) == "last week"  # in no form: left as it is
    assert padded("2023-10-123 to 2023-10-7", days) == "2023-10-123 to 2023-10-7"
    when = described("Either 'MM/DD/YYYY' or 'HH:MM'.")
    assert padded("3/1/2024", when) == "03/01/2024" and padded("9:05", when) == "09:05"


DIARY = Tool("diary", "Read the diary.", {"type": "object", "properties": {
    "day": described("The day, in the format 'YYYY-MM-DD'."), "topic": {"type": "string"}}, "required": ["day"]})


def test_validation_widens_a_date_and_says_so() -> None:
    args, warnings = validate_arguments(DIARY, {"day": "2024-3-9", "topic": "2024-3-9"})
    assert args == {"day": "2024-03-09", "topic": "2024-3-9"}  # a string of no prescribed form is the caller's
    assert warnings == ["wrote 'day' '2024-3-9' as '2024-03-09', in the form its description prescribes"]
    assert validate_arguments(DIARY, {"day": "tomorrow"}) == ({"day": "tomorrow"}, [])
    with pytest.raises(ArgumentError):
        validate_arguments(DIARY, {"topic": "2024-3-9"})
