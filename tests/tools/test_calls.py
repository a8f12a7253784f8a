"""ToolCall and ToolResult: call ids and the JSON form of arguments."""

import re

from voxcall.tools import ToolCall, ToolResult
from voxcall.tools.calls import new_call_id

CALL_ID = re.compile(r"call_[A-Za-z0-9_-]{24}")


def test_call_id_is_call_prefix_and_24_url_safe_characters() -> None:
    assert CALL_ID.fullmatch(new_call_id())
    assert CALL_ID.fullmatch(ToolCall("f", {}).call_id)


def test_call_ids_are_unique() -> None:
    ids = {new_call_id() for _ in range(1000)} | {ToolCall("f", {}).call_id for _ in range(1000)}
    assert len(ids) == 2000


def test_explicit_call_id_is_kept() -> None:
    assert ToolCall("f", {}, call_id="call_abc").call_id == "call_abc"


def test_arguments_json_is_compact_and_keeps_non_ascii() -> None:
    call = ToolCall("weather", {"city": "Zürich", "days": [1, 2], "units": None})
    assert call.arguments_json == '{"city":"Zürich","days":[1,2],"units":null}'


def test_warnings_default_to_a_fresh_list() -> None:
    first, second = ToolCall("f", {}), ToolCall("f", {})
    first.warnings.append("dropped x")
    assert second.warnings == []


def test_tool_result_defaults() -> None:
    result = ToolResult("ok")
    assert (result.output, result.is_error, result.data) == ("ok", False, None)
