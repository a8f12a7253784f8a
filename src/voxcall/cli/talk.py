"""``voxcall talk`` talks to a server (WAV file, typed text or microphone, over Realtime or GPT-Live), ``voxcall
chat`` asks one question of an in-process session."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from voxcall.cli.base import app, fail, load_settings, run_client
from voxcall.cli.serve import (
    BaseUrlOption,
    ConfigOption,
    InstructionsOption,
    LlmOption,
    ModelOption,
    ScriptOption,
    ToolFormatOption,
)
from voxcall.client.session import ANSWER_TIMEOUT
from voxcall.client.transport import LIVE_URL, REALTIME_URL
from voxcall.config import ConfigError, ServerSettings
from voxcall.startup import Startup

if TYPE_CHECKING:
    from voxcall.client.display import ConsoleReporter
    from voxcall.client.tools import ClientTools
    from voxcall.llm import LLMBackend

ToolModuleOption = Annotated[str | None, typer.Option(
    help="Client-side tools: a .py file or module name exporting TOOLS (Realtime tool dicts) and "
    "'async def execute_tool(name, arguments)'.",
)]
TimeoutOption = Annotated[float, typer.Option(help="Seconds to wait for the complete answer.")]


@app.command()
def talk(
    url: Annotated[str | None, typer.Option(help=f"The server's endpoint [default: {REALTIME_URL}, or "
                                                 f"{LIVE_URL} with --live]")] = None,
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
    timeout: TimeoutOption = ANSWER_TIMEOUT,
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
    options = realtime.TalkOptions(url=url or (LIVE_URL if live else REALTIME_URL), api_key=api_key,
                                   tools=_client_tools(tool_module), instructions=instructions, timeout=timeout)
    reporter = ConsoleReporter()
    if wav is not None:
        run_client(mode.talk_wav(options, wav, out, reporter, fast=fast))
    elif text is not None:
        run_client(mode.talk_text(options, text, out, reporter))
    else:
        run_client(mode.talk_live(options, reporter))


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
    timeout: TimeoutOption = ANSWER_TIMEOUT,
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
        settings = load_settings({"llm": llm, "model": model, "base_url": base_url, "tool_format": tool_format,
                                  "instructions": instructions, "script": script, "config": config})
        settings = resolve_llm(settings, Startup(Console(stderr=True)))
        backend = build_backend(settings)
    except ConfigError as exc:
        fail(str(exc))
    tools = _client_tools(tool_module) or builtin_tools()
    reporter = ConsoleReporter()
    run_client(_chat(backend, prompt, settings, tools, reporter, timeout))


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
