"""The ``voxcall`` command line. ``voxcall serve`` runs the realtime server on uvicorn.

Heavy modules (the LLM backends, the web app, uvicorn) are imported inside the functions that need them, so
``voxcall --help`` answers at once.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
import yaml
from rich.console import Console
from rich.text import Text

from voxcall.config import ConfigError, LogLevel, ServerSettings, ToolFormat, is_loopback

if TYPE_CHECKING:
    import uvicorn
    from starlette.applications import Starlette

    from voxcall.llm import LLMBackend

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


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(
        help="Interface to listen on; beyond loopback, client API keys are required.", show_default=_default("host"),
    )] = None,
    port: Annotated[int | None, typer.Option(help="TCP port.", show_default=_default("port"))] = None,
    llm: Annotated[str | None, typer.Option(
        help="LLM backend: scripted, openai-chat or openai-responses.", show_default=_default("llm"),
    )] = None,
    model: Annotated[str | None, typer.Option(help="Model name (required by the openai-* backends).")] = None,
    base_url: Annotated[str | None, typer.Option(
        help="OpenAI-compatible server URL (vLLM, llama.cpp, Ollama …); default: OpenAI.",
    )] = None,
    api_key: Annotated[str | None, typer.Option(
        help="Upstream LLM API key. Prefer the VOXCALL_LLM_API_KEY environment variable (or OPENAI_API_KEY for "
        "OpenAI itself): a flag ends up in your shell history and the process list.",
    )] = None,
    tool_format: Annotated[ToolFormat | None, typer.Option(
        help="Tool calls as the API's native calls, or as Python <code> blocks in the text (small local models).",
        show_default=_default("tool_format"),
    )] = None,
    script: Annotated[Path | None, typer.Option(
        help="Script file (YAML or JSON) for the scripted backend; default: its built-in greeting script.",
    )] = None,
    prefetch: Annotated[bool | None, typer.Option(
        "--prefetch/--no-prefetch", help="Speculatively run the follow-up response after tool output.",
        show_default="prefetch",
    )] = None,
    config: Annotated[Path | None, typer.Option(
        help="YAML settings file (keys are the settings' names).", show_default="./voxcall.yaml if it exists",
    )] = None,
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

    Settings come from these flags, over the YAML file, over VOXCALL_* environment variables, over defaults.
    """
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
        web_app, backend = build_server(settings)
    except ConfigError as exc:
        _fail(str(exc))
    _print_summary(settings)
    run_server(web_app, backend, settings)


def build_server(settings: ServerSettings) -> tuple[Starlette, LLMBackend]:
    """The web app and the LLM backend it uses, ready to serve; raises :class:`ConfigError` when the backend
    cannot be built from ``settings`` (unknown kind, missing model, unreadable script …)."""
    from voxcall.llm import LLMError, create_backend
    from voxcall.realtime.app import create_app

    try:
        backend = create_backend(
            settings.llm, model=settings.model, base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            tool_format=settings.tool_format, script=settings.script, timeout=settings.llm_timeout,
        )
    except (ValueError, OSError, yaml.YAMLError, LLMError) as exc:
        message = " ".join(str(exc).split())
        raise ConfigError(f"cannot create the {settings.llm!r} LLM backend: {message}") from None
    return create_app(settings, backend), backend


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


def _print_summary(settings: ServerSettings) -> None:
    """One line saying what is served: URL, backend, prefetch and auth (never a key)."""
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    model = f" ({settings.model})" if settings.model else ""
    summary = (f"voxcall serving ws://{host}:{settings.port}/v1/realtime · llm {settings.llm}{model} · "
               f"prefetch {_on_off(settings.prefetch)} · auth {_on_off(bool(settings.client_keys()))}")
    Console().print(Text(summary), soft_wrap=True)


def _on_off(flag: bool) -> str:
    """``on`` or ``off``."""
    return "on" if flag else "off"


def _fail(message: str) -> NoReturn:
    """Print ``message`` as a one-line red error on stderr and exit with :data:`EXIT_CONFIG_ERROR`."""
    Console(stderr=True).print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
    raise typer.Exit(EXIT_CONFIG_ERROR)
