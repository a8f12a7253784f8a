"""``voxcall serve`` runs the server, ``voxcall config`` prints the settings it would run with, ``voxcall voices``
lists what sessions can speak with. Each flag of ``serve`` sets one setting (:data:`~voxcall.cli.base.SETTING_OF_FLAG`)
and its help is that setting's description."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
import yaml
from rich.console import Console
from rich.text import Text

from voxcall.cli.base import app, fail, load_settings, setting_option
from voxcall.config import ConfigError, LogLevel, ToolFormat, VadKind, default_of
from voxcall.startup import Startup

if TYPE_CHECKING:
    from voxcall.server import Server

_F = TypeVar("_F", bound=Callable[..., Any])

ConfigOption = Annotated[Path | None, typer.Option(
    help="YAML settings file (keys are the settings' names, in sections: session:, speech:, tools:, mcp:).",
    show_default="./voxcall.yaml if it exists",
)]
LlmOption = Annotated[str | None, setting_option("llm", show_default="llamacpp when installed, else scripted")]
ModelOption = Annotated[str | None, setting_option("model", show_default=False)]
BaseUrlOption = Annotated[str | None, setting_option("base_url", show_default="OpenAI")]
ToolFormatOption = Annotated[ToolFormat | None, setting_option("tool_format", show_default="the backend's own")]
ScriptOption = Annotated[Path | None, setting_option("script", show_default="its built-in demo script")]
InstructionsOption = Annotated[str | None, setting_option("instructions",
                                                          show_default="a short spoken-answer prompt")]


@app.command()
def serve(
    host: Annotated[str | None, setting_option("host")] = None,
    port: Annotated[int | None, setting_option("port")] = None,
    llm: LlmOption = None,
    model: ModelOption = None,
    thinker: Annotated[str | None, setting_option("thinker")] = None,
    base_url: BaseUrlOption = None,
    api_key: Annotated[str | None, setting_option("api_key", show_default=False)] = None,
    tool_format: ToolFormatOption = None,
    script: ScriptOption = None,
    instructions: InstructionsOption = None,
    prefetch: Annotated[bool | None, setting_option(
        "prefetch", "--prefetch/--no-prefetch",
        show_default="prefetch" if default_of("session.prefetch") else "no-prefetch")] = None,
    max_speculative: Annotated[int | None, setting_option("max_speculative")] = None,
    llm_timeout: Annotated[float | None, setting_option("llm_timeout")] = None,
    max_frame_bytes: Annotated[int | None, setting_option("max_frame_bytes")] = None,
    max_history_items: Annotated[int | None, setting_option("max_history_items")] = None,
    max_hidden_events: Annotated[int | None, setting_option("max_hidden_events")] = None,
    max_tools: Annotated[int | None, setting_option("max_tools")] = None,
    eager_turn_ms: Annotated[int | None, setting_option("eager_turn_ms")] = None,
    speech: Annotated[bool | None, setting_option("speech", "--speech/--no-speech",
                                                  show_default="speech when the models are installed")] = None,
    vad: Annotated[VadKind | None, setting_option("vad")] = None,
    stt_model: Annotated[str | None, setting_option("stt_model", show_default="the packaged tiny.en")] = None,
    tts_voice: Annotated[Path | None, setting_option("tts_voice", show_default="the packaged joe")] = None,
    config: ConfigOption = None,
    api_key_file: Annotated[Path | None, setting_option("api_key_file", show_default=False)] = None,
    insecure_no_auth: Annotated[bool, setting_option("insecure_no_auth", "--insecure-no-auth",
                                                     show_default=False)] = False,
    allow_origin: Annotated[list[str] | None, setting_option("allow_origin", show_default=False)] = None,
    log_level: Annotated[LogLevel | None, setting_option("log_level")] = None,
    max_sessions: Annotated[int | None, setting_option("max_sessions")] = None,
    max_sessions_per_key: Annotated[int | None, setting_option("max_sessions_per_key")] = None,
    shutdown_grace: Annotated[float | None, setting_option("shutdown_grace")] = None,
    shutdown_close_code: Annotated[int | None, setting_option("shutdown_close_code")] = None,
) -> None:
    """Serve the OpenAI Realtime protocol on ws://HOST:PORT/v1/realtime (and GET /healthz, /metrics, and the
    playground page at http://HOST:PORT/).

    By default the server hears and speaks with the packaged offline models (Silero VAD, Whisper tiny.en, Piper
    joe) and thinks with the in-process SmolLM2 when llama.cpp is installed, else with the scripted demo. Nothing
    is downloaded: the process runs with HF_HUB_OFFLINE=1. Settings come from these flags, over the YAML file, over
    VOXCALL_* environment variables (VOXCALL_SESSION__LLM_TIMEOUT=30 for session.llm_timeout), over defaults;
    `voxcall config` prints them.
    """
    flags = dict(locals())  # first: the parameters only (every one but config is a flag of SETTING_OF_FLAG)
    from voxcall.server import build_server, configure_logging, run_server

    os.environ["HF_HUB_OFFLINE"] = "1"  # every model ships in a package; never reach for a hub
    startup = Startup(Console(stderr=True))
    try:
        settings = load_settings(flags)
        settings.check_exposure()
        configure_logging(settings.log_level)
        with startup:
            server = build_server(settings, startup)
    except ConfigError as exc:
        fail(str(exc))
    _print_summary(server, startup)
    run_server(server)


def _same_options_as(template: Callable[..., Any]) -> Callable[[_F], _F]:
    """Give the decorated command ``template``'s options (typer reads them from the signature)."""
    def copy(command: _F) -> _F:
        command.__signature__ = inspect.signature(template, eval_str=True)  # type: ignore[attr-defined]
        return command
    return copy


@app.command("config")
@_same_options_as(serve)
def show_config(**flags: Any) -> None:
    """Print the settings `voxcall serve` would run with, given the same options, as YAML (secrets masked).

    The output is a valid voxcall.yaml. llm shows the backend "auto" picks here; speech.enabled null means "when
    the speech models are installed".
    """
    from voxcall.llm import resolve_kind

    try:
        settings = load_settings(flags)
    except ConfigError as exc:
        fail(str(exc))
    settings = settings.model_copy(update={"llm": resolve_kind(settings.llm, settings.model)})
    typer.echo(yaml.safe_dump(settings.masked(), sort_keys=False, allow_unicode=True, width=120), nl=False)


@app.command()
def voices(config: ConfigOption = None) -> None:
    """List the voices sessions may choose with audio.output.voice: name, language, source (a Piper .onnx file, or
    espeak-ng). The packaged Piper voice is joe; more come from speech.voices in the config file."""
    from voxcall.speech import SpeechModelError
    from voxcall.speech.voices import VoiceCatalog

    try:
        speech = load_settings({"config": config}).speech
        catalog = VoiceCatalog.configured(speech.voices, speech.tts_voice)
    except (ConfigError, SpeechModelError) as exc:
        fail(str(exc))
    for voice in catalog.listing():
        default = " (default)" if voice.name == catalog.default else ""
        typer.echo(f"{voice.name + default:<28} {voice.language:<4} {voice.source}")


def _print_summary(server: Server, startup: Startup) -> None:
    """What is served (never a key), and what loaded in how long."""
    console = Console()
    console.print(Text(server.summary()), soft_wrap=True)
    console.print(Text(startup.summary(), "dim"), soft_wrap=True)
