"""The ``local:`` settings reach the local models (the talker and, by default, its thinker): from the config file
through ``build_backend`` to the engine and the planner, each default the settings' own."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.llm.local.test_llama_server import WEATHER
from tests.requirements import require_catalog_model, require_smollm2
from voxcall.config import ConfigError, LocalModelSettings, ServerSettings
from voxcall.llm import LlamaCppBackend, LLMRequest, Message
from voxcall.llm.local.duet import Duet
from voxcall.server import build_backend

require_smollm2()

BOSTON = LLMRequest(items=[Message("user", "Weather in Boston")], tools=[WEATHER])


def test_the_local_section_reaches_the_model_and_the_planner(tmp_path: Path) -> None:
    config = tmp_path / "voxcall.yaml"
    config.write_text("llm: llamacpp\nthinker:\n  model: off\n"
                      "local:\n  n_ctx: 1024\n  threads: 1\n  state_cache_bytes: 0\n"
                      "  max_prompt_tools: 3\n  call_threshold: 0.7\n  acknowledge_after_ms: null\n"
                      "  copy_strings: false\n  jump_forward: false\n",
                      encoding="utf-8")
    backend = build_backend(ServerSettings.load(config))
    try:
        assert isinstance(backend, LlamaCppBackend)
        assert backend.planner.n_ctx == backend.server.options.n_ctx == 1024
        assert (backend.server.options.threads, backend.server.options.cache_mib) == (1, 0)
        options = backend.planner.options
        assert (options.max_prompt_tools, options.call_threshold, options.acknowledge_after_ms) == (3, 0.7, None)
        assert options.copy_strings is False and options.jump_forward is False
        assert not backend.planner.plan(BOSTON, [WEATHER]).jumps
        plan = backend.planner.plan(BOSTON, [WEATHER])  # the city is any string, not only the words said
        assert plan.call_grammar is not None and "said-enum" not in plan.call_grammar
    finally:
        asyncio.run(backend.aclose())


def test_without_the_section_the_settings_defaults_apply_to_the_default_pair() -> None:
    require_catalog_model("qwen2.5-coder-0.5b")
    backend = build_backend(ServerSettings.load(llm="llamacpp"))
    defaults = LocalModelSettings()
    try:
        assert isinstance(backend, Duet)  # the default model with the thinker its catalog entry names
        talker, thinker = backend.talker, backend.thinker
        assert isinstance(talker, LlamaCppBackend) and isinstance(thinker, LlamaCppBackend)
        assert (talker.server.model_path.name, thinker.server.model_path.name) == (require_smollm2().name,
                                                                       "qwen2.5-coder-0.5b.gguf")
        assert backend.options.talker_languages == frozenset({"en"})  # Chinese small talk goes to the thinker
        for model in (talker, thinker):
            served = model.server.options
            assert model.planner.n_ctx == served.n_ctx == defaults.n_ctx
            assert (served.slots, served.threads) == (defaults.slots, defaults.threads)
            assert served.cache_mib == defaults.state_cache_bytes // 2**20
            options = model.planner.options
            assert (options.max_prompt_tools, options.call_threshold, options.acknowledge_after_ms) == (
                defaults.max_prompt_tools, defaults.call_threshold, defaults.acknowledge_after_ms)
            assert options.copy_strings is defaults.copy_strings is True
            assert options.jump_forward is defaults.jump_forward is True
            plan = model.planner.plan(BOSTON, [WEATHER])
            assert plan.call_grammar is not None and "said-enum" in plan.call_grammar  # a span of the words
            assert "\"'Boston'\"" in plan.call_grammar
        # each model's catalog entry: SmolLM2's probabilities do not tell unrelated words apart, Qwen's do
        assert (talker.planner.options.unrelated_threshold, thinker.planner.options.unrelated_threshold) == (None, 0.9)
        # and whether it writes a string the tool prescribes a form for: SmolLM2 would write 'text', Qwen writes it
        assert [model.planner.plan(BOSTON, [WEATHER]).write_forms for model in (talker, thinker)] == [False, True]
    finally:
        asyncio.run(backend.aclose())


def test_an_unknown_or_invalid_local_setting_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "voxcall.yaml"
    config.write_text("local:\n  ctx: 1024\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="ctx"):
        ServerSettings.load(config)
    with pytest.raises(ConfigError, match="call_threshold"):
        ServerSettings.load(local={"call_threshold": 1.5})
