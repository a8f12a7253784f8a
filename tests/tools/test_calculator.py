"""The calculator built-in and the built-in registration helpers."""

import pytest

from voxcall.tools import ToolError, ToolRegistry
from voxcall.tools.builtin import BUILTINS, register_builtins
from voxcall.tools.builtin.calculator import calculator


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    register_builtins(registry, ["calculator"])
    return registry


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [("add", 2, 3, 5), ("sub", 2, 3, -1), ("mul", 2, 3, 6), ("div", 6, 3, 2.0), ("div", 1, 4, 0.25),
     ("add", 0.5, 0.25, 0.75)],
)
async def test_each_operation(registry: ToolRegistry, op: str, a: float, b: float, expected: float) -> None:
    result = await registry.call("calculator", {"op": op, "a": a, "b": b})
    assert not result.is_error
    assert result.data == expected
    assert result.output == str(expected)


async def test_int_inputs_stay_ints(registry: ToolRegistry) -> None:
    result = await registry.call("calculator", {"op": "add", "a": 2, "b": 3})
    assert result.output == "5"
    assert type(result.data) is int


@pytest.mark.parametrize("b", [0, 0.0])
async def test_division_by_zero_is_an_error_result(registry: ToolRegistry, b: float) -> None:
    result = await registry.call("calculator", {"op": "div", "a": 1, "b": b})
    assert result.is_error
    assert result.output == "division by zero"


async def test_overflow_is_an_error_result(registry: ToolRegistry) -> None:
    result = await registry.call("calculator", {"op": "mul", "a": 1e308, "b": 10})
    assert result.is_error
    assert "too large" in result.output


async def test_unknown_operation_is_rejected_by_validation(registry: ToolRegistry) -> None:
    result = await registry.call("calculator", {"op": "pow", "a": 2, "b": 3})
    assert result.is_error
    assert "'op'" in result.output
    assert "pow" in result.output


async def test_non_number_operand_is_rejected(registry: ToolRegistry) -> None:
    result = await registry.call("calculator", {"op": "add", "a": "2", "b": 3})
    assert result.is_error
    assert "'a'" in result.output


async def test_function_stays_directly_callable() -> None:
    assert await calculator("sub", 5, 2) == 3
    with pytest.raises(ToolError, match="division by zero"):
        await calculator("div", 1, 0)


def test_schema_describes_the_operations(registry: ToolRegistry) -> None:
    tool = registry.get("calculator")
    assert tool is not None
    assert tool.description
    assert sorted(tool.required) == ["a", "b", "op"]
    assert tool.properties["op"]["enum"] == ["add", "sub", "mul", "div"]
    assert all(tool.properties[name].get("description") for name in ("op", "a", "b"))


def test_builtins_lists_calculator() -> None:
    assert "calculator" in BUILTINS


def test_unknown_builtin_raises_listing_known_and_registers_nothing() -> None:
    registry = ToolRegistry()
    with pytest.raises(ValueError, match=r"unknown built-in tool: nope \(known: .*calculator"):
        register_builtins(registry, ["calculator", "nope"])
    assert len(registry) == 0


def test_registering_a_builtin_twice_raises() -> None:
    registry = ToolRegistry()
    register_builtins(registry, ["calculator"])
    with pytest.raises(ValueError, match="already registered"):
        register_builtins(registry, ["calculator"])
