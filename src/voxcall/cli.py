"""The ``voxcall`` command line: ``serve`` runs the realtime server, ``config`` prints the settings it would run
with, ``talk`` talks to a server (WAV file, typed text or microphone), ``chat`` asks one question of an in-process
pipeline, ``voices`` and ``models`` list what sessions can speak with and think with (``models install NAME``
installs a local model).

This module maps arguments to settings and prints; building and running the server is :mod:`voxcall.server`'s
job. Heavy modules are imported inside the commands that need them, so ``voxcall --help`` answers at once.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
import yaml
from rich.console import Console
from rich.text import Text

from voxcall.config import ConfigError, LogLevel, ServerSettings, ToolFormat, VadKind, default_of
from voxcall.startup import Startup

if TYPE_CHECKING:
    from voxcall.client.display import ConsoleReporter
    from voxcall.client.tools import ClientTools
    from voxcall.llm import LLMBackend
    from voxcall.server import Server

DEFAULT_CONFIG = Path("voxcall.yaml")
"""The config file ``serve`` reads when ``--config`` is not given, if it exists in the working directory."""

EXIT_CONFIG_ERROR = 2
"""Exit status for a configuration the server refuses to start with (the same as click's usage errors)."""

EXIT_CLIENT_ERROR = 1
"""Exit status of ``talk`` and ``chat`` when the conversation fails (no server, an error, no answer …)."""

EXIT_INTERRUPTED = 130
"""Exit status of ``talk`` and ``chat`` stopped with Ctrl-C (128 + SIGINT, as shells report it)."""

DEFAULT_URL = "ws://127.0.0.1:8765/v1/realtime"
"""Where ``voxcall talk`` connects by default: ``voxcall serve`` with its defaults."""

SETTING_OF_FLAG: dict[str, str] = {
    "host": "host", "port": "port", "llm": "llm", "model": "model", "base_url": "base_url", "api_key": "api_key",
    "tool_format": "tool_format", "script": "script", "api_key_file": "api_key_file",
    "insecure_no_auth": "insecure_no_auth", "allow_origin": "allowed_origins", "log_level": "log_level",
    "max_sessions": "max_sessions", "max_sessions_per_key": "max_sessions_per_key",
    "shutdown_grace": "shutdown_grace", "shutdown_close_code": "shutdown_close_code",
    "instructions": "session.instructions", "prefetch": "session.prefetch",
    "max_speculative": "session.max_speculative", "llm_timeout": "session.llm_timeout",
    "max_frame_bytes": "session.max_frame_bytes", "max_history_items": "session.max_history_items",
    "max_hidden_events": "session.max_hidden_events", "eager_turn_ms": "session.eager_turn_ms",
    "max_tools": "session.max_tools",
    "speech": "speech.enabled", "vad": "speech.vad", "stt_model": "speech.stt_model", "tts_voice": "speech.tts_voice",
}
"""The setting (a dotted path into :class:`~voxcall.config.ServerSettings`) each flag of ``serve`` sets."""

_F = TypeVar("_F", bound=Callable[..., Any])

app = typer.Typer(
    name="voxcall",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals may hold API keys
    rich_markup_mode=None,  # plain help: rich's tables cut long option names (--max-history-ite…) at 80 columns
)


@app.callback()
def main() -> None:
    """voxcall: a realtime voice-agent server, OpenAI Realtime compatible, whose heart is tool calling."""


def _default(path: str) -> str:
    """The default of the setting at ``path``, as ``--help`` shows it (the flags default to None: "not given")."""
    return str(default_of(path))


LlmOption = Annotated[str | None, typer.Option(
    help="LLM backend: llamacpp (in process), llama-server (llama.cpp's, at --base-url), scripted, "
    "openai-chat or openai-responses.",
    show_default="llamacpp when installed, else scripted",
)]
ModelOption = Annotated[str | None, typer.Option(
    help="Model: for llamacpp and llama-server a catalog name (voxcall models), hf:OWNER/REPO/FILE or a GGUF path "
    "(default: smollm2-135m); for the openai-* backends the provider's model name.",
)]
BaseUrlOption = Annotated[str | None, typer.Option(
    help="OpenAI-compatible server URL (vLLM, llama.cpp, Ollama …); default: OpenAI.",
)]
ToolFormatOption = Annotated[ToolFormat | None, typer.Option(
    help="Tool calls as the API's native calls, or as Python <code> blocks in the text (small local models); "
    "llamacpp always writes code calls under a grammar.",
    show_default="the backend's own",
)]
ScriptOption = Annotated[Path | None, typer.Option(
    help="Script file (YAML or JSON) for the scripted backend; default: its built-in demo script.",
)]
ConfigOption = Annotated[Path | None, typer.Option(
    help="YAML settings file (keys are the settings' names, in sections: session:, speech:, tools:, mcp:).",
    show_default="./voxcall.yaml if it exists",
)]
ToolModuleOption = Annotated[str | None, typer.Option(
    help="Client-side tools: a .py file or module name exporting TOOLS (Realtime tool dicts) and "
    "'async def execute_tool(name, arguments)'.",
)]
InstructionsOption = Annotated[str | None, typer.Option(
    help="System instructions for sessions that set none.", show_default="a short spoken-answer prompt",
)]
TimeoutOption = Annotated[float, typer.Option(help="Seconds to wait for the complete answer.")]


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(
        help="Interface to listen on; beyond loopback, client API keys are required.", show_default=_default("host"),
    )] = None,
    port: Annotated[int | None, typer.Option(help="TCP port.", show_default=_default("port"))] = None,
    llm: LlmOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key: Annotated[str | None, typer.Option(
        help="Upstream LLM API key. Prefer the VOXCALL_LLM_API_KEY environment variable (or OPENAI_API_KEY for "
        "OpenAI itself): a flag ends up in your shell history and the process list.",
    )] = None,
    tool_format: ToolFormatOption = None,
    script: ScriptOption = None,
    instructions: InstructionsOption = None,
    prefetch: Annotated[bool | None, typer.Option(
        "--prefetch/--no-prefetch", help="Speculatively run the follow-up response after tool output.",
        show_default="prefetch" if default_of("session.prefetch") else "no-prefetch",
    )] = None,
    max_speculative: Annotated[int | None, typer.Option(
        help="Hidden follow-up responses running at once, process-wide.",
        show_default=_default("session.max_speculative"),
    )] = None,
    llm_timeout: Annotated[float | None, typer.Option(
        help="Seconds of silence from the LLM before a response fails.", show_default=_default("session.llm_timeout"),
    )] = None,
    max_frame_bytes: Annotated[int | None, typer.Option(
        help="Largest client WebSocket message; larger ones get an error event.",
        show_default=_default("session.max_frame_bytes"),
    )] = None,
    max_history_items: Annotated[int | None, typer.Option(
        help="Conversation items a session keeps.", show_default=_default("session.max_history_items"),
    )] = None,
    max_hidden_events: Annotated[int | None, typer.Option(
        help="Events a hidden follow-up buffers before it pauses.", show_default=_default("session.max_hidden_events"),
    )] = None,
    max_tools: Annotated[int | None, typer.Option(
        help="Function tools a session (or one response) may declare.", show_default=_default("session.max_tools"),
    )] = None,
    eager_turn_ms: Annotated[int | None, typer.Option(
        help="Pause (ms) inside a spoken turn after which the answer is prepared, hidden until the turn ends; 0: off.",
        show_default=_default("session.eager_turn_ms"),
    )] = None,
    speech: Annotated[bool | None, typer.Option(
        "--speech/--no-speech", help="Hear and speak (VAD, Whisper speech-to-text, Piper text-to-speech). When the "
        "speech models are not installed the server runs text-only with a note, unless --speech was given.",
        show_default="speech when the models are installed",
    )] = None,
    vad: Annotated[VadKind | None, typer.Option(
        help="Voice activity detector: Silero (accurate) or WebRTC (light).", show_default=_default("speech.vad"),
    )] = None,
    stt_model: Annotated[str | None, typer.Option(
        help="Whisper model: an installed one by name (tiny.en; base with the [multilingual] extra) or a "
        "CTranslate2 Whisper folder; default: the packaged tiny.en.",
    )] = None,
    tts_voice: Annotated[Path | None, typer.Option(
        help="Default Piper voice (.onnx, with its .onnx.json beside it); default: the packaged en_US joe medium, "
        "else espeak-ng if it is on PATH. `voxcall voices` lists the voices sessions may choose.",
    )] = None,
    config: ConfigOption = None,
    api_key_file: Annotated[Path | None, typer.Option(
        help="File of client API keys, one per line ('#' starts a comment line); VOXCALL_API_KEYS works too.",
    )] = None,
    insecure_no_auth: Annotated[bool, typer.Option(
        "--insecure-no-auth", help="Listen beyond loopback without client API keys: anyone who reaches the port "
        "can use it (and your LLM account).",
    )] = False,
    allow_origin: Annotated[list[str] | None, typer.Option(
        help="A web page origin (https://app.example) whose scripts may connect, besides the server's own page; "
        "repeat for more, '*' for any. Clients that send no Origin header are not affected.",
    )] = None,
    log_level: Annotated[LogLevel | None, typer.Option(
        help="Log level of voxcall and uvicorn.", show_default=_default("log_level"),
    )] = None,
    max_sessions: Annotated[int | None, typer.Option(
        help="Realtime sessions served at once; one more is refused with HTTP 503.",
        show_default=_default("max_sessions"),
    )] = None,
    max_sessions_per_key: Annotated[int | None, typer.Option(
        help="Sessions one client API key may hold at once (with client keys); one more is refused with HTTP 429.",
        show_default=_default("max_sessions_per_key"),
    )] = None,
    shutdown_grace: Annotated[float | None, typer.Option(
        help="Seconds a stop signal (SIGTERM, Ctrl-C) gives running responses to finish before every session is "
        "closed (with --shutdown-close-code); a second signal cuts it short.",
        show_default=_default("shutdown_grace"),
    )] = None,
    shutdown_close_code: Annotated[int | None, typer.Option(
        help="WebSocket close code of the sessions a stop ends: 1001 (going away) or 1012 (service restart; "
        "replicas behind a load balancer, so that clients reconnect to another one).",
        show_default=_default("shutdown_close_code"),
    )] = None,
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
        settings = _load(flags)
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
        settings = _load(flags)
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
        speech = _load({"config": config}).speech
        catalog = VoiceCatalog.configured(speech.voices, speech.tts_voice)
    except (ConfigError, SpeechModelError) as exc:
        fail(str(exc))
    for voice in catalog.listing():
        default = " (default)" if voice.name == catalog.default else ""
        typer.echo(f"{voice.name + default:<28} {voice.language:<4} {voice.source}")


def _load(flags: Mapping[str, Any]) -> ServerSettings:
    """The settings from ``flags`` (``serve``'s parameters; None or False: not given) and the config file."""
    overrides: dict[str, Any] = {}
    for flag, value in flags.items():
        if flag == "config" or value is None or value == [] or (flag == "insecure_no_auth" and value is False):
            continue  # not given: --insecure-no-auth is a plain switch, off unless given; a repeatable flag, empty
        *sections, name = SETTING_OF_FLAG[flag].split(".")
        target = overrides
        for section in sections:
            target = target.setdefault(section, {})
        target[name] = value
    return ServerSettings.load(_config_path(flags.get("config")), **overrides)


def _print_summary(server: Server, startup: Startup) -> None:
    """What is served (never a key), and what loaded in how long."""
    console = Console()
    console.print(Text(server.summary()), soft_wrap=True)
    console.print(Text(startup.summary(), "dim"), soft_wrap=True)


@app.command()
def talk(
    url: Annotated[str | None, typer.Option(help=f"The server's endpoint [default: {DEFAULT_URL}, or "
                                                 "ws://127.0.0.1:8765/v1/live/sessions with --live]")] = None,
    live: Annotated[bool, typer.Option(help=(
        "Talk over GPT-Live (/v1/live/sessions) instead of Realtime. GPT-Live has no user text event: a --text "
        "question opens the session as its startup input, and a commentary append has the voice answer it; "
        "tasks the voice delegates are answered as undoable; no --tool-module."))] = False,
    api_key: Annotated[str | None, typer.Option(help="Client API key, when the server requires one.")] = None,
    wav: Annotated[Path | None, typer.Option(
        help="Say this WAV file (PCM, any rate) instead of using the microphone; then exit.", exists=True,
        dir_okay=False,
    )] = None,
    out: Annotated[Path | None, typer.Option(
        help="Write the spoken answer here (24 kHz mono WAV); without it, answers to --wav/--text are text.",
        dir_okay=False,
    )] = None,
    fast: Annotated[bool, typer.Option(help="Stream --wav as fast as possible instead of in real time.")] = False,
    text: Annotated[str | None, typer.Option(help="Type this turn instead of speaking; then exit.")] = None,
    tool_module: ToolModuleOption = None,
    instructions: InstructionsOption = None,
    timeout: TimeoutOption = 120.0,
) -> None:
    """Talk to a voxcall server over Realtime, or GPT-Live with --live: microphone and speaker, a WAV file, or text.

    Prints what the server heard, the answer as it streams and every tool call. Without --wav or --text it
    listens on the microphone and answers on the speaker (needs the sounddevice package; use headphones) until
    Ctrl-C.
    """
    from voxcall.client import talk as realtime
    from voxcall.client import talk_gpt_live as gpt_live
    from voxcall.client.display import ConsoleReporter

    if wav is not None and text is not None:
        fail("--wav and --text are two ways to say one turn: give one of them")
    if fast and wav is None:
        fail("--fast applies to --wav")
    if out is not None and wav is None and text is None:
        fail("--out needs --wav or --text (live answers play on the speaker)")
    if live and tool_module is not None:
        fail("--tool-module applies to Realtime: under GPT-Live the voice has no client tools (it delegates tasks)")
    mode = gpt_live if live else realtime
    options = realtime.TalkOptions(url=url or (gpt_live.DEFAULT_URL if live else DEFAULT_URL), api_key=api_key,
                                   tools=_client_tools(tool_module), instructions=instructions, timeout=timeout)
    reporter = ConsoleReporter()
    if wav is not None:
        _run_client(mode.talk_wav(options, wav, out, reporter, fast=fast))
    elif text is not None:
        _run_client(mode.talk_text(options, text, out, reporter))
    else:
        _run_client(mode.talk_live(options, reporter))


@app.command()
def chat(
    prompt: Annotated[str, typer.Argument(help="What to ask, as the user would.")],
    llm: LlmOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    tool_format: ToolFormatOption = None,
    instructions: InstructionsOption = None,
    script: ScriptOption = None,
    tool_module: Annotated[str | None, typer.Option(
        help="Offer these tools instead of the built-in calculator: a .py file or module name exporting TOOLS "
        "and 'async def execute_tool(name, arguments)'.",
    )] = None,
    config: ConfigOption = None,
    timeout: TimeoutOption = 120.0,
) -> None:
    """Ask one question of an in-process pipeline (no server): prints the tool calls and the answer.

    The same session code as the server runs in this process, offering the built-in calculator (try
    "what is 12 times 8"). Handy for trying models, prompts and tool formats. The upstream key of the openai-*
    backends comes from VOXCALL_LLM_API_KEY (or OPENAI_API_KEY).
    """
    from voxcall.client.chat import builtin_tools
    from voxcall.client.display import ConsoleReporter
    from voxcall.server import build_backend, resolve_llm

    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        settings = _load({"llm": llm, "model": model, "base_url": base_url, "tool_format": tool_format,
                          "instructions": instructions, "script": script, "config": config})
        settings = resolve_llm(settings, Startup(Console(stderr=True)))
        backend = build_backend(settings)
    except ConfigError as exc:
        fail(str(exc))
    tools = _client_tools(tool_module) or builtin_tools()
    reporter = ConsoleReporter()
    _run_client(_chat(backend, prompt, settings, tools, reporter, timeout))


async def _chat(backend: LLMBackend, prompt: str, settings: ServerSettings, tools: ClientTools,
                reporter: ConsoleReporter, timeout: float) -> None:
    """One chat turn, then its cost on a dim line; the backend is closed on the loop that used it."""
    from voxcall.client.chat import chat

    try:
        stats = await chat(backend, prompt, settings.session, tools, reporter, timeout=timeout)
    finally:
        await backend.aclose()
    reporter.note(str(stats))


def _client_tools(spec: str | None) -> ClientTools | None:
    """The tools of the ``--tool-module`` ``spec`` (None without one); exits with a clear error if it is broken."""
    from voxcall.client.tools import ToolModuleError, load_tool_module

    if spec is None:
        return None
    try:
        return load_tool_module(spec)
    except ToolModuleError as exc:
        fail(str(exc))


def _run_client(conversation: Coroutine[Any, Any, None]) -> None:
    """Run a client conversation; a failure is one red line and :data:`EXIT_CLIENT_ERROR`, Ctrl-C a quiet exit
    with :data:`EXIT_INTERRUPTED`."""
    from voxcall.client.transport import ClientError
    from voxcall.client.wavfile import WavError

    try:
        asyncio.run(conversation)
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except (ClientError, WavError) as exc:
        Console(stderr=True).print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
        raise typer.Exit(EXIT_CLIENT_ERROR) from None


def _config_path(given: Path | None) -> Path | None:
    """The config file to read: ``--config``, else ``./voxcall.yaml`` when it exists, else none."""
    if given is not None:
        return given
    return DEFAULT_CONFIG if DEFAULT_CONFIG.is_file() else None


def fail(message: str) -> NoReturn:
    """Print ``message`` as a one-line red error on stderr and exit with :data:`EXIT_CONFIG_ERROR`."""
    Console(stderr=True).print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
    raise typer.Exit(EXIT_CONFIG_ERROR)


def _register_subcommands() -> None:
    """Add the commands that live in modules of their own (``voxcall models``, ``voxcall eval``)."""
    from voxcall.evaluation.command import evaluate
    from voxcall.models_cli import models_app

    app.add_typer(models_app, name="models")
    app.command("eval")(evaluate)


_register_subcommands()
