"""ServerSettings: the sections and their defaults, where each value comes from (flags, YAML, VOXCALL_* with
nested ``__``), the YAML file's rules, masking, client keys and the exposure check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import SecretStr

from voxcall.config import (
    DEFAULT_INSTRUCTIONS,
    MASK,
    ConfigError,
    ServerSettings,
    SessionOptions,
    SpeechSettings,
    default_of,
    is_loopback,
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No VOXCALL_* or OPENAI_API_KEY from the developer's shell leaks into a test."""
    for name in list(os.environ):
        if name.upper().startswith("VOXCALL_") or name.upper() == "OPENAI_API_KEY":
            monkeypatch.delenv(name)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- defaults and precedence ---------------------------------------------------------------------------------------


def test_defaults() -> None:
    settings = ServerSettings.load(None)
    assert (settings.host, settings.port, settings.llm) == ("127.0.0.1", 8765, None)  # llm None: auto
    assert settings.model is None and settings.api_key is None and settings.script is None
    assert settings.tool_format is None  # the backend's own
    assert settings.api_keys == [] and settings.api_key_file is None and settings.insecure_no_auth is False
    assert settings.log_level == "info"
    assert settings.session == SessionOptions(instructions=DEFAULT_INSTRUCTIONS, prefetch=True, max_speculative=8,
                                              llm_timeout=60.0, max_frame_bytes=1_048_576, max_history_items=200,
                                              max_hidden_events=2048)
    assert settings.speech == SpeechSettings(enabled=None, vad="silero", stt_model=None, tts_voice=None)


def test_default_of_reads_the_model() -> None:
    assert default_of("port") == 8765 and default_of("llm") is None
    assert default_of("session.llm_timeout") == 60.0 and default_of("speech.vad") == "silero"
    assert default_of("tools.builtin") == []


def test_precedence_cli_over_yaml_over_env_over_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_PORT", "1111")
    monkeypatch.setenv("VOXCALL_MODEL", "env-model")
    monkeypatch.setenv("VOXCALL_LOG_LEVEL", "debug")
    monkeypatch.setenv("VOXCALL_SESSION__MAX_HISTORY_ITEMS", "50")
    config = write(tmp_path / "voxcall.yaml", "port: 2222\nmodel: yaml-model\n"
                   "session:\n  prefetch: false\n  llm_timeout: 30\n")

    settings = ServerSettings.load(config, port=3333, model=None, host=None,
                                   session={"llm_timeout": 5, "instructions": None})

    assert settings.port == 3333  # CLI beats YAML and env
    assert settings.model == "yaml-model"  # YAML beats env; a None flag is "not given"
    assert settings.session.prefetch is False  # YAML beats the default, and a flag in its section leaves it be
    assert settings.session.llm_timeout == 5  # a flag beats its YAML section's value
    assert settings.session.max_history_items == 50  # env fills in the section's other fields
    assert settings.session.instructions == DEFAULT_INSTRUCTIONS
    assert settings.log_level == "debug"  # env beats the default
    assert settings.host == "127.0.0.1"  # nobody set it


def test_env_values_are_parsed_in_sections_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_SESSION__PREFETCH", "false")
    monkeypatch.setenv("VOXCALL_SESSION__LLM_TIMEOUT", "2.5")
    monkeypatch.setenv("VOXCALL_TOOL_FORMAT", "code")
    monkeypatch.setenv("VOXCALL_SPEECH__ENABLED", "false")
    monkeypatch.setenv("VOXCALL_SPEECH__VAD", "webrtc")
    monkeypatch.setenv("VOXCALL_SPEECH__TTS_VOICE", "voices/amy.onnx")
    monkeypatch.setenv("VOXCALL_TOOLS__BUILTIN", '["calculator"]')
    settings = ServerSettings.load(None)
    assert settings.session.prefetch is False and settings.session.llm_timeout == 2.5
    assert settings.tool_format == "code" and settings.tools.builtin == ["calculator"]
    assert settings.speech == SpeechSettings(enabled=False, vad="webrtc", tts_voice=Path("voices/amy.onnx"))


def test_a_section_field_set_without_its_section_in_env_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_LLM_TIMEOUT", "30")
    with pytest.raises(ConfigError, match="VOXCALL_LLM_TIMEOUT \\(use VOXCALL_SESSION__LLM_TIMEOUT\\)"):
        ServerSettings.load(None)


def test_invalid_env_value_in_a_section_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_SESSION__MAX_SPECULATIVE", "0")
    with pytest.raises(ConfigError, match=r"session\.max_speculative"):
        ServerSettings.load(None)


def test_upstream_key_from_env_flag_and_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_LLM_API_KEY", "from-env")
    assert _secret(ServerSettings.load(None).api_key) == "from-env"
    config = write(tmp_path / "c.yaml", "api_key: from-yaml\n")
    assert _secret(ServerSettings.load(config).api_key) == "from-yaml"
    assert _secret(ServerSettings.load(config, api_key="from-flag").api_key) == "from-flag"


def test_voxcall_api_key_is_not_the_upstream_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_API_KEY", "meant-for-clients")
    assert ServerSettings.load(None).api_key is None


def test_openai_api_key_fallback_only_for_openai_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    assert _secret(ServerSettings.load(None, llm="openai-chat", model="m").api_key) == "sk-openai"
    assert ServerSettings.load(None, llm="scripted").api_key is None
    local = ServerSettings.load(None, llm="openai-chat", model="m", base_url="http://127.0.0.1:8080/v1")
    assert local.api_key is None  # never sent to another server
    monkeypatch.setenv("VOXCALL_LLM_API_KEY", "own-key")
    assert _secret(ServerSettings.load(None, llm="openai-responses", model="m").api_key) == "own-key"


def test_secrets_are_not_shown() -> None:
    settings = ServerSettings.load(None, api_key="sk-secret", api_keys="client-secret")
    assert "sk-secret" not in repr(settings) and "client-secret" not in repr(settings)


def test_masked_hides_every_secret(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "mcp:\n  servers:\n"
                   "    gh: {command: gh-mcp, env: {GITHUB_TOKEN: ghp-secret, LANG: C}}\n"
                   "    web: {url: 'http://127.0.0.1:9/mcp', headers: {Authorization: Bearer web-secret}}\n")
    masked = ServerSettings.load(config, api_key="sk-secret", api_keys="client-1,client-2").masked()
    assert masked["api_key"] == MASK and masked["api_keys"] == [MASK, MASK]
    assert masked["mcp"]["servers"]["gh"]["env"] == {"GITHUB_TOKEN": MASK, "LANG": "C"}
    assert masked["mcp"]["servers"]["web"]["headers"] == {"Authorization": MASK}
    assert masked["session"]["llm_timeout"] == 60.0 and masked["llm"] is None
    assert ServerSettings.load(None).masked()["api_key"] is None  # nothing to hide


# --- the YAML file -------------------------------------------------------------------------------------------------


def test_session_and_speech_sections(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "session:\n  instructions: Be brief.\n  max_speculative: 2\n"
                   "speech:\n  enabled: true\n  vad: webrtc\n  stt_model: models/whisper\n")
    settings = ServerSettings.load(config)
    assert settings.session.instructions == "Be brief." and settings.session.max_speculative == 2
    assert settings.speech == SpeechSettings(enabled=True, vad="webrtc", stt_model="models/whisper")
    bad = write(tmp_path / "bad.yaml", "speech:\n  vad: loud\n")
    with pytest.raises(ConfigError, match=r"speech\.vad"):
        ServerSettings.load(bad)


def test_telemetry_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (default_of("telemetry.tracing"), default_of("telemetry.record_content")) == ("auto", False)
    config = write(tmp_path / "voxcall.yaml", "telemetry:\n  tracing: on\n  record_content: true\n")
    settings = ServerSettings.load(config)
    assert (settings.telemetry.tracing, settings.telemetry.record_content) == ("on", True)
    monkeypatch.setenv("VOXCALL_TELEMETRY__TRACING", "off")
    assert ServerSettings.load(None).telemetry.tracing == "off"
    for text, setting in (("tracing: sometimes", r"telemetry\.tracing"), ("record_content: maybe",
                                                                          r"telemetry\.record_content"),
                          ("sample: 0.5", r"telemetry\.sample")):
        bad = write(tmp_path / "bad.yaml", f"telemetry:\n  {text}\n")
        with pytest.raises(ConfigError, match=setting):
            ServerSettings.load(bad)


def test_unknown_sections_are_refused(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "port: 9000\nspeeches:\n  vad: silero\n")
    with pytest.raises(ConfigError, match=r"unknown setting\(s\) speeches"):
        ServerSettings.load(config)


def test_a_flat_key_that_belongs_in_a_section_says_which(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "llm_timeout: 30\n")
    with pytest.raises(ConfigError, match="llm_timeout belongs in the session: section"):
        ServerSettings.load(config)


def test_tools_and_mcp_sections(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "tools:\n  builtin: [calculator, music]\n  music_dir: ./music\n"
                   "  modules: [my_tools.py]\n  max_tool_rounds: 3\n"
                   "mcp:\n  servers:\n    time: {command: mcp-server-time, args: [--local-timezone, UTC]}\n")
    settings = ServerSettings.load(config)
    assert settings.tools.builtin == ["calculator", "music"] and settings.tools.max_tool_rounds == 3
    assert settings.tools.modules == ["my_tools.py"] and str(settings.tools.music_dir) == "music"
    assert settings.mcp.servers["time"]["args"] == ["--local-timezone", "UTC"]
    bad = write(tmp_path / "bad.yaml", "tools:\n  buildin: [calculator]\n")
    with pytest.raises(ConfigError, match=r"tools\.buildin"):
        ServerSettings.load(bad)


def test_unknown_plain_setting_is_a_likely_typo(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "prot: 9000\n")
    with pytest.raises(ConfigError, match=r"voxcall\.yaml: unknown setting\(s\) prot"):
        ServerSettings.load(config)


def test_empty_file_means_defaults(tmp_path: Path) -> None:
    assert ServerSettings.load(write(tmp_path / "voxcall.yaml", "# nothing yet\n")).port == 8765


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match=r"nope\.yaml: not found") as caught:
        ServerSettings.load(missing)
    assert str(missing) in str(caught.value)


def test_malformed_yaml(tmp_path: Path) -> None:
    config = write(tmp_path / "bad.yaml", "port: [1, 2\nhost: x\n")
    with pytest.raises(ConfigError, match="not valid YAML") as caught:
        ServerSettings.load(config)
    assert str(config) in str(caught.value) and "\n" not in str(caught.value)


def test_yaml_that_is_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"bad\.yaml: expected a mapping of settings, got list"):
        ServerSettings.load(write(tmp_path / "bad.yaml", "- port\n- host\n"))


def test_invalid_value_names_the_setting_and_the_file(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "port: ninety\n")
    with pytest.raises(ConfigError, match="port") as caught:
        ServerSettings.load(config)
    assert str(config) in str(caught.value) and "ninety" not in str(caught.value)


def test_invalid_values_from_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="tool_format"):
        ServerSettings.load(None, tool_format="xml")
    with pytest.raises(ConfigError, match=r"session\.max_frame_bytes"):
        ServerSettings.load(None, session={"max_frame_bytes": 0})
    monkeypatch.setenv("VOXCALL_PORT", "70000")
    with pytest.raises(ConfigError, match="port"):
        ServerSettings.load(None)


def test_log_level_is_case_insensitive() -> None:
    assert ServerSettings.load(None, log_level="WARNING").log_level == "warning"


# --- client keys ---------------------------------------------------------------------------------------------------


def test_api_keys_from_env_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_API_KEYS", "alpha, beta,,gamma ")
    assert ServerSettings.load(None).client_keys() == {"alpha", "beta", "gamma"}


def test_api_keys_from_yaml_list(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "api_keys:\n  - one\n  - two\n")
    assert ServerSettings.load(config).client_keys() == {"one", "two"}


def test_api_key_file_skips_comments_and_blank_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = write(tmp_path / "keys", "# laptop\nkey-one\n\n   \n  key-two  \n  # old key\n")
    monkeypatch.setenv("VOXCALL_API_KEYS", "env-key")
    settings = ServerSettings.load(None, api_key_file=key_file)
    assert settings.client_keys() == {"key-one", "key-two", "env-key"}


def test_unreadable_or_empty_key_file(tmp_path: Path) -> None:
    missing = ServerSettings.load(None, api_key_file=tmp_path / "missing-keys")
    with pytest.raises(ConfigError, match="missing-keys: cannot read it"):
        missing.client_keys()
    empty = ServerSettings.load(None, api_key_file=write(tmp_path / "keys", "# none yet\n"))
    with pytest.raises(ConfigError, match="holds no keys"):
        empty.client_keys()


# --- exposure ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.5.0.1", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_needs_no_keys(host: str) -> None:
    assert is_loopback(host)
    ServerSettings.load(None, host=host).check_exposure()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "example.com"])
def test_exposed_host_needs_keys(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(ConfigError, match="--api-key-file") as caught:
        ServerSettings.load(None, host=host).check_exposure()
    assert "VOXCALL_API_KEYS" in str(caught.value) and "--insecure-no-auth" in str(caught.value)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5"])
def test_exposed_host_with_keys_or_insecure_flag(host: str, tmp_path: Path) -> None:
    ServerSettings.load(None, host=host, api_keys="k1").check_exposure()
    ServerSettings.load(None, host=host, api_key_file=write(tmp_path / "keys", "k2\n")).check_exposure()
    ServerSettings.load(None, host=host, insecure_no_auth=True).check_exposure()


def _secret(value: object) -> str:
    """The secret inside a SecretStr (asserting there is one)."""
    assert isinstance(value, SecretStr)
    return value.get_secret_value()


def test_the_thinker_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ServerSettings.load(None).thinker.model == "auto"  # the pair the talker's catalog entry names
    config = write(tmp_path / "voxcall.yaml", "thinker:\n  model: qwen2.5-coder-1.5b\n  acknowledge_after_ms: 300\n"
                   "  deadline_s: 8\n")
    thinker = ServerSettings.load(config).thinker
    assert (thinker.model, thinker.llm, thinker.acknowledge_after_ms, thinker.deadline_s) == (
        "qwen2.5-coder-1.5b", "llamacpp", 300, 8.0)
    monkeypatch.setenv("VOXCALL_MODEL", "talker")  # the talker's, though the thinker has a model too
    monkeypatch.setenv("VOXCALL_THINKER__API_KEY", "sk-thinker")
    settings = ServerSettings.load(None)
    assert settings.model == "talker" and settings.masked()["thinker"]["api_key"] == MASK
    for off in ("off", "'off'", "null"):  # YAML reads a bare off as false: off all the same
        assert ServerSettings.load(write(tmp_path / "off.yaml", f"thinker:\n  model: {off}\n")).thinker.model in (
            "off", None)
    for yaml_text, named in [
        ("thinker:\n  deadline_s: 0\n", r"thinker\.deadline_s"),
        ("thinker:\n  acknowledge_after_ms: -1\n", r"thinker\.acknowledge_after_ms"),
        ("thinker:\n  modle: x\n", r"thinker\.modle"),
    ]:
        with pytest.raises(ConfigError, match=named):
            ServerSettings.load(write(tmp_path / "bad.yaml", yaml_text))


def test_the_xiaozhi_section(tmp_path: Path) -> None:
    config = write(tmp_path / "voxcall.yaml", "profiles:\n  kitchen: {language: zh}\n"
                   "xiaozhi:\n  tokens: [{token: a-long-device-token-1, profile: kitchen}]\n"
                   "  public_url: wss://voice.example.com/\n  allowed_devices: ['aa:bb:cc:dd:ee:ff']\n")
    settings = ServerSettings.load(config)
    assert settings.xiaozhi.public_url == "wss://voice.example.com"
    assert settings.xiaozhi.tokens[0].token.get_secret_value() == "a-long-device-token-1"
    assert settings.xiaozhi.profile_names() == {"kitchen"} and settings.profiles["kitchen"].language == "zh"
    for yaml_text, named in [
        ("xiaozhi:\n  profile: attic\n", "xiaozhi names agent profile\\(s\\) attic"),
        ("xiaozhi:\n  tokens: [{token: short}]\n", "at least 16 characters"),
        ("xiaozhi:\n  public_url: https://voice.example.com/xiaozhi\n", r"xiaozhi\.public_url"),
        ("xiaozhi:\n  sample_rate: 44100\n", r"xiaozhi\.sample_rate"),
    ]:
        with pytest.raises(ConfigError, match=named) as caught:
            ServerSettings.load(write(tmp_path / "bad.yaml", yaml_text))
        assert "short" not in str(caught.value).replace("at least", "")  # a token is never echoed
