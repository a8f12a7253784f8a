"""Argument validation's depth bounds: deep arguments and schemas are refused clearly, never a RecursionError."""

from typing import Any

import pytest

from voxcall.tools import Tool, ToolRegistry
from voxcall.tools.validation import (
    MAX_ARGUMENT_DEPTH,
    MAX_SCHEMA_DEPTH,
    ArgumentError,
    nesting_depth,
    validate_arguments,
)


def deep_value(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"x": value}
    return value


def deep_schema(depth: int) -> dict[str, Any]:
    """An object schema whose ``x`` nests ``depth`` objects (about twice as deep as JSON)."""
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


OPEN = Tool("store", "Stores anything.", {"type": "object", "properties": {"x": {}}})


def test_nesting_depth_counts_levels_and_stops_past_its_limit() -> None:
    assert nesting_depth(5, 10) == 0
    assert nesting_depth({"a": [1, {"b": []}]}, 10) == 4
    assert nesting_depth(deep_value(100_000), 10) == 11  # measured no further than the limit, without recursion


def test_arguments_nested_too_deeply_are_refused() -> None:
    with pytest.raises(ArgumentError, match=f"nested more than {MAX_ARGUMENT_DEPTH} levels"):
        validate_arguments(OPEN, deep_value(2_000))
    args, _ = validate_arguments(OPEN, deep_value(MAX_ARGUMENT_DEPTH))
    assert nesting_depth(args, 100) == MAX_ARGUMENT_DEPTH


def test_arguments_as_deep_as_allowed_against_a_deep_schema_never_recurse_too_far() -> None:
    tool = Tool("nest", "Nested.", deep_schema(MAX_SCHEMA_DEPTH // 2 - 1))
    validate_arguments(tool, deep_value(MAX_ARGUMENT_DEPTH))


def test_a_schema_nested_too_deeply_is_refused() -> None:
    tool = Tool("nest", "Nested.", deep_schema(600))
    with pytest.raises(ArgumentError, match="schema of 'nest' is nested more than"):
        validate_arguments(tool, {"x": {}})


def test_a_schema_that_refers_to_itself_without_end_is_refused() -> None:
    tool = Tool("loop", "Loops.", {"type": "object", "$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}})
    with pytest.raises(ArgumentError, match="recurses without end"):
        validate_arguments(tool, {})


async def test_the_registry_answers_deep_arguments_with_an_error_result() -> None:
    registry = ToolRegistry()
    registry.add(OPEN, lambda x: "stored")
    result = await registry.call("store", deep_value(5_000))
    assert result.is_error and "nested more than" in result.output
