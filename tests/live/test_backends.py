"""``live.backends``: named LLM backends for the tasks a GPT-Live voice delegates, built from the settings."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from voxcall import server
from voxcall.config import ConfigError, ServerSettings
from voxcall.llm import ScriptedBackend
from voxcall.startup import Startup


def test_each_named_backend_is_the_servers_settings_with_its_own_over_them(tmp_path: Path) -> None:
    script = tmp_path / "office.yaml"
    script.write_text(yaml.safe_dump({"default": "From the office."}))
    settings = ServerSettings.load(None, llm="scripted", speech={"enabled": False},
                                   live={"backends": {"office": {"script": str(script)}}})
    startup = Startup()
    built = server.build_server(settings, startup)
    office = built.delegates["office"]
    assert isinstance(office, ScriptedBackend) and office is not built.backend
    assert [step.name for step in startup.steps] == ["scripted", "office LLM (live.backends)"]


def test_a_named_backend_takes_only_backend_settings() -> None:
    with pytest.raises(ConfigError, match=r"backend 'office': unknown key\(s\) \['port'\]"):
        ServerSettings.load(None, live={"backends": {"office": {"port": 1}}})


def test_a_named_backend_that_cannot_be_built_stops_the_server_with_its_name() -> None:
    settings = ServerSettings.load(None, llm="scripted", speech={"enabled": False},
                                   live={"backends": {"office": {"llm": "openai-chat"}}})  # no model
    with pytest.raises(ConfigError, match="openai-chat"):
        server.build_server(settings, Startup())
