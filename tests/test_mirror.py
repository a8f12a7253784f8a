"""Tests mirror the package layout: ``src/voxcall/a/b.py`` is tested in ``tests/a/test_b.py`` (or
``tests/a/test_b_*.py``).

A module without such a file is listed in :data:`ELSEWHERE` with the test file that covers it (the file must exist),
or in :data:`TRIVIAL` with why it needs none of its own. The lists are for modules that are really tested through
others or hold no behaviour; a new module gets its test file.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "voxcall"
TESTS = ROOT / "tests"

ELSEWHERE: dict[str, str] = {
    # the composition root and the commands
    "app": "tests/test_server.py",
    "startup": "tests/test_server.py",
    "cli/base": "tests/test_cli.py",
    "cli/models": "tests/test_cli.py",
    "cli/serve": "tests/test_cli.py",
    "cli/talk": "tests/test_cli.py",
    "client/display": "tests/client/test_live.py",
    "client/gpt_live": "tests/client/test_talk_gpt_live.py",
    "client/transport": "tests/client/test_session.py",
    # the settings tree: loaded, layered and checked as one
    **{f"config/{name}": "tests/test_config.py" for name in (
        "kinds", "live", "loading", "local", "security", "server", "session", "speech", "telemetry", "telephony",
        "thinker", "tools", "webrtc", "xiaozhi")},
    # voxcall eval, run as its users run it (the command against a served voxcall)
    **{f"evaluation/{name}": "tests/evaluation/test_eval_text.py" for name in (
        "channel", "command", "connect", "realtime", "record", "report", "runner")},
    "evaluation/live": "tests/evaluation/test_eval_speech.py",
    "telemetry/otel": "tests/telemetry/test_otlp_export.py",
    # the core, through the sessions that use it
    "core/conversation/items": "tests/core/conversation/test_conversation.py",
    "core/conversation/output_items": "tests/core/responses/test_response.py",
    "core/hearing/input_buffer": "tests/core/hearing/test_heard_audio.py",
    "core/hearing/transcription": "tests/speech/test_multilingual.py",
    "core/landed": "tests/core/tools/test_tool_ledger.py",
    "core/playout": "tests/twilio/test_phone_call.py",
    "core/requests": "tests/core/responses/test_response.py",
    "core/responses/response_inputs": "tests/core/responses/test_response.py",
    "core/responses/speaker": "tests/realtime/test_voice.py",
    "core/responses/timing": "tests/realtime/test_voice.py",
    "core/settings": "tests/realtime/test_settings.py",
    "core/tools/toolbox": "tests/realtime/test_tool_cache.py",
    # the edges: each tested as its clients use it
    "live/audio_bridge": "tests/live/test_voice.py",
    "live/config": "tests/live/test_protocol.py",
    "live/delegation": "tests/live/test_protocol.py",
    "live/endpoint": "tests/live/test_protocol.py",
    "live/session": "tests/live/test_protocol.py",
    "live/timeline": "tests/live/test_playout.py",
    "realtime/beta": "tests/realtime/test_protocol.py",
    "realtime/connection": "tests/realtime/test_protocol.py",
    "realtime/items": "tests/core/conversation/test_conversation.py",
    "realtime/playout": "tests/realtime/test_playback.py",
    "realtime/session_fields": "tests/realtime/test_settings.py",
    "twilio/endpoint": "tests/twilio/test_phone_call.py",
    "twilio/frames": "tests/twilio/test_call.py",
    "twilio/keypad": "tests/twilio/test_call.py",
    "twilio/playout": "tests/twilio/test_phone_call.py",
    "webrtc/endpoint": "tests/webrtc/test_call.py",
    "webrtc/ice": "tests/webrtc/test_call.py",
    "serving/draining": "tests/test_server.py",
    "serving/frames": "tests/realtime/test_unicode.py",
    "serving/gate": "tests/serving/test_admission.py",
    "serving/metrics": "tests/core/responses/test_lifecycle.py",
    "serving/rate": "tests/realtime/test_rate_limits.py",
    "serving/shared": "tests/serving/test_host.py",
    # the rooms other work owns (llm, speech, tools): tested as their owners laid them out
    "llm/calls": "tests/llm/test_parallel_calls.py",
    "llm/history": "tests/llm/test_base.py",
    "llm/openai_client": "tests/llm/test_openai_chat.py",
    "llm/local/arithmetic": "tests/llm/local/test_lexicon.py",
    "llm/local/meanings": "tests/llm/local/test_lexicon.py",
    "llm/local/backend": "tests/llm/local/test_llamacpp.py",
    "llm/local/driver": "tests/llm/local/test_listed_calls.py",
    "llm/local/engine": "tests/llm/local/test_engines.py",
    "llm/local/embedded": "tests/llm/local/test_llamacpp.py",
    "llm/local/parallel": "tests/llm/local/test_listed_calls.py",
    "llm/local/plan": "tests/llm/local/test_prompt_cache.py",
    "llm/local/sent_prompts": "tests/llm/local/test_warm.py",
    "llm/local/serve": "tests/llm/test_llamacpp_server.py",
    "llm/local/server_engine": "tests/llm/local/test_engines.py",
    "packaged": "tests/speech/test_smart_turn.py",
    "speech/catalog": "tests/speech/test_models.py",
    "speech/loading": "tests/speech/test_models.py",
    "speech/utterance": "tests/speech/test_stt.py",
    "speech/voice": "tests/speech/test_voices.py",
    "tools/arguments": "tests/tools/test_from_function.py",
    "tools/builtin/calculator": "tests/tools/test_calculator.py",
    "tools/codecalls/formats": "tests/tools/codecalls/test_format_stream.py",
    "tools/codecalls/segments": "tests/tools/codecalls/test_stream.py",
    "tools/context": "tests/tools/test_registry.py",
    "tools/effects": "tests/tools/test_cache.py",
    "tools/mcp/connection": "tests/tools/mcp/test_lifecycle.py",
    "tools/mcp/listing": "tests/tools/mcp/test_manager.py",
    "tools/mcp/names": "tests/tools/mcp/test_results.py",
    "tools/mcp/transport": "tests/tools/mcp/test_stdio.py",
    "tools/names": "tests/tools/mcp/test_results.py",
    "tools/ratelimit": "tests/tools/test_registry.py",
    "tools/signature": "tests/tools/test_schema.py",
}
"""Modules tested through another module's test file, and that file."""

TRIVIAL: dict[str, str] = {
    **{f"core/events/{family}": "event dataclasses; every one encoded in tests/realtime/test_encode.py"
       for family in ("conversation", "hearing", "responses", "session", "tools")},
    "core/commands": "command dataclasses",
    "core/errors": "one exception and one check",
    "core/ids": "id generation",
    "core/observer": "a protocol and its no-op",
    "core/parts": "a dataclass of the process's parts",
    **{f"language/{code}": "phrases only, checked in tests/language/test_scripts.py"
       for code in ("de", "es", "fr", "it", "ja", "ko", "pt")},
    "language/en": "rules as data, read in tests/speech/test_verbalizer.py and tests/tools/builtin/test_volume.py",
    "language/rules": "the dataclasses the language modules fill in",
    "speech/errors": "exception classes",
    "tools/codecalls/events": "event dataclasses",
}
"""Modules that hold no behaviour of their own, and why."""


def modules() -> list[str]:
    return sorted(str(path.relative_to(SRC).with_suffix("")) for path in SRC.rglob("*.py")
                  if path.stem not in ("__init__", "__main__"))


def has_test_file(module: str) -> bool:
    folder, _, stem = module.rpartition("/")
    where = TESTS / folder if folder else TESTS
    return (where / f"test_{stem}.py").is_file() or any(where.glob(f"test_{stem}_*.py"))


def test_every_module_has_a_test_file_or_says_why_not() -> None:
    missing = [module for module in modules()
               if not has_test_file(module) and module not in ELSEWHERE and module not in TRIVIAL]
    assert missing == [], f"modules with no tests/<path>/test_<name>.py: {missing}"


def test_the_lists_name_only_modules_without_their_own_test_file() -> None:
    listed = set(ELSEWHERE) | set(TRIVIAL)
    assert listed <= set(modules()), f"no such module: {sorted(listed - set(modules()))}"
    assert [module for module in sorted(listed) if has_test_file(module)] == []  # it has its own now: unlist it
    assert [path for path in ELSEWHERE.values() if not (ROOT / path).is_file()] == []
