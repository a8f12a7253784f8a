"""``bench_bfcl``'s checker compares a call with BFCL's ground truth as BFCL's own checker does: figures counted
otherwise would not be BFCL's."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_bfcl import call_matches
from voxcall.tools.calls import ToolCall

AIRCON = {"ThinQ_Connect": {"body": [{"airConJobMode": ["", "COOL"], "windStrength": ["HIGH"],
                                      "targetTemperature": ["", 22]}]}}


def _call(arguments: dict[str, object]) -> ToolCall:
    return ToolCall("ThinQ_Connect", dict(arguments))


def test_an_object_is_compared_key_by_key() -> None:
    assert call_matches(_call({"body": {"airConJobMode": "COOL", "windStrength": "HIGH"}}), AIRCON)
    assert call_matches(_call({"body": {"windStrength": "high"}}), AIRCON)  # strings as BFCL compares them
    assert not call_matches(_call({"body": {"airConJobMode": "COOL"}}), AIRCON)  # a key "" does not excuse
    assert not call_matches(_call({"body": {"windStrength": "HIGH", "targetTemperature": 24}}), AIRCON)
    assert not call_matches(_call({"body": {"windStrength": "HIGH", "powerSave": True}}), AIRCON)  # a key unknown


def test_a_list_of_objects_is_compared_object_by_object() -> None:
    truth = {"ThinQ_Connect": {"items": [[{"name": ["tea"], "size": ["", "large"]}, {"name": ["cake"]}]]}}
    assert call_matches(_call({"items": [{"name": "tea"}, {"name": "cake"}]}), truth)
    assert not call_matches(_call({"items": [{"name": "tea"}]}), truth)
    assert not call_matches(_call({"items": [{"name": "cake"}, {"name": "tea"}]}), truth)
