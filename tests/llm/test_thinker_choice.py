"""Which thinker decides behind the server's model: ``thinker.model: auto`` pairs the in-process catalog model with
the thinker its entry names (when installed), ``off`` and null mean none, a named model is taken as named."""

from __future__ import annotations

import pytest

from voxcall import server
from voxcall.config import ServerSettings, ThinkerSettings
from voxcall.llm import catalog, paired_thinker, resolve_thinker, talker_languages
from voxcall.startup import Startup

QWEN = catalog.CATALOG["qwen2.5-coder-0.5b"]
AUTO = ThinkerSettings()


def test_auto_pairs_the_in_process_default_model_with_its_catalog_thinker() -> None:
    assert AUTO.model == "auto"
    assert catalog.CATALOG[catalog.DEFAULT_MODEL].thinker == QWEN.name
    assert paired_thinker("llamacpp", None, AUTO) is QWEN
    assert paired_thinker("llamacpp", catalog.DEFAULT_MODEL, AUTO) is QWEN  # named, it is the same model


@pytest.mark.parametrize(("kind", "model", "thinker"), [
    ("llamacpp", "qwen2.5-coder-0.5b", AUTO),  # its entry names no thinker: it decides alone
    ("llamacpp", "/models/any.gguf", AUTO),  # a file outside the catalog
    ("llama-server", None, AUTO),  # replicas share a server: no second model in each process
    ("scripted", None, AUTO),
    ("openai-chat", "gpt-4o-mini", AUTO),
    ("llamacpp", None, ThinkerSettings(llm="llama-server")),  # a thinker elsewhere must be named
    ("llamacpp", None, ThinkerSettings(model="off")),
    ("llamacpp", None, ThinkerSettings(model=None)),
])
def test_auto_pairs_nothing_else(kind: str, model: str | None, thinker: ThinkerSettings) -> None:
    assert paired_thinker(kind, model, thinker) is None


def test_the_thinker_built_is_the_one_named_the_installed_pair_or_none(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_thinker("scripted", None, ThinkerSettings(model="m", llm="scripted")) == "m"
    assert resolve_thinker("llamacpp", None, ThinkerSettings(model="off")) is None
    assert resolve_thinker("llamacpp", None, ThinkerSettings(model=None)) is None
    monkeypatch.setattr("voxcall.llm.installed", lambda model: None)  # the pair's thinker is not installed
    assert resolve_thinker("llamacpp", None, AUTO) is None  # the talker decides alone


def test_a_server_missing_its_paired_thinker_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voxcall.llm.catalog.installed", lambda model: None)
    startup = Startup()
    server.note_missing_thinker(ServerSettings.load(None, llm="llamacpp"), startup)
    assert startup.notes == [f"the thinker {QWEN.name} is not installed (voxcall models install {QWEN.name}): "
                             f"{catalog.DEFAULT_MODEL} decides alone"]
    quiet = Startup()
    server.note_missing_thinker(ServerSettings.load(None, llm="scripted"), quiet)
    server.note_missing_thinker(ServerSettings.load(None, llm="llamacpp", thinker={"model": "off"}), quiet)
    assert quiet.notes == []


def test_small_talk_goes_to_the_talker_only_in_the_languages_its_entry_names() -> None:
    assert talker_languages("llamacpp", None) == frozenset({"en"})  # SmolLM2
    assert talker_languages("llama-server", "smollm2-135m") == frozenset({"en"})
    assert talker_languages("llamacpp", "qwen2.5-coder-0.5b") is None  # any
    assert talker_languages("llamacpp", "/models/any.gguf") is None
    assert talker_languages("openai-chat", None) is None  # not a catalog model, though its model is unset


def test_the_start_line_names_the_talker_and_its_thinker() -> None:
    settings = ServerSettings.load(None, llm="scripted", thinker={"model": "m", "llm": "scripted"},
                                   speech={"enabled": False})
    backend = server.build_backend(settings)
    running = server.Server(settings, app=None, backend=backend, voice=None, admission=None)  # type: ignore[arg-type]
    assert " · llm scripted + thinker scripted · " in running.summary()
