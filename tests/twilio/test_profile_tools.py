"""An agent profile's share of the server tools: just the ones it names, run as the process runs them."""

from __future__ import annotations

import pytest

from voxcall.config import ServerSettings
from voxcall.core.tools.toolbox import Toolbox
from voxcall.tools import ToolContext


async def test_a_profile_gets_only_the_tools_it_names() -> None:
    box = await Toolbox.from_settings(ServerSettings(tools={"builtin": ["calculator", "clock"]}))
    assert {t.name for t in box.tools} >= {"calculator"} and len(box.tools) > 1
    part = box.only(["calculator"])
    assert [t.name for t in part.tools] == ["calculator"]
    result = await part.run("calculator", {"op": "mul", "a": 6, "b": 7}, ToolContext(session_id="s"))
    assert "42" in result.output
    refused = await part.run(box.tools[-1].name, {}, ToolContext(session_id="s"))
    assert refused.is_error  # a tool outside the profile is unknown to its calls
    assert len(box.tools) > 1  # the process's toolbox is unchanged
    assert box.only([]).tools == []
    with pytest.raises(ValueError, match="no server tool named 'weather'"):
        box.only(["calculator", "weather"])
