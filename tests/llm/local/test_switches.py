"""A switch said: the value of a flag that turns something on, when the words say "on" or "off" (and not both)."""

from __future__ import annotations

import pytest

from voxcall.llm.local.switches import switched

FLAG = {"type": "boolean"}


@pytest.mark.parametrize(("said", "name", "value"), [
    ("Switch the lounge lights on.", "on", True),  # the 0.5B thinker wrote on=False
    ("Lights off in the bathroom.", "on", False),
    ("Turn ON the porch light", "lightsOn", True),  # a name split as the rules split names, any case said
    ("Kill the power, switch it off", "is_on", False),
    ("把书房的灯打开。", "on", True),
    ("关掉客厅的灯。", "power_on", False),
    ("Turn off the lights on the porch", "on", None),  # both said: the model's
    ("Brighten up the living room", "on", None),  # neither said
    ("List the orders on my account", "include_on_hold", None),  # "on" not at the name's end: switches nothing
    ("Turn it on", "urgent", None),
])
def test_the_words_switch_a_flag_named_on(said: str, name: str, value: bool | None) -> None:
    assert switched(said, name, FLAG) is value


def test_only_a_flag_is_switched() -> None:
    assert switched("Turn it on", "on", {"type": "string"}) is None
    assert switched("Turn it on", "on", None) is None
    assert switched("Turn it on", "on", {"type": "boolean"}) is True
