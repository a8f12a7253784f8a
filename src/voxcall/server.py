"""The composition root: everything ``voxcall serve`` runs, built from one :class:`~voxcall.config.ServerSettings`.

:func:`build_server` resolves the backend kind ("auto" included), loads the speech models the ``speech:`` section
asks for (each once), builds the LLM backend and the web app; :func:`run_server` serves it on uvicorn until a stop
signal, drains its sessions (:mod:`voxcall.serving.draining`) and then closes the backend. Nothing here parses arguments
or prints a summary (that is :mod:`voxcall.cli`), so tests and embedders call it directly. Progress and notes
go to a :class:`~voxcall.startup.Startup`.

Heavy modules (the LLM backends, the speech models, the web app, uvicorn) are imported inside the functions that
need them, so importing this module is cheap.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import yaml
from pydantic import SecretStr

from voxcall.config import ConfigError, ModelInput, ServerSettings, SpeechSettings, is_loopback
from voxcall.startup import Startup

if TYPE_CHECKING:
    import uvicorn
    from starlette.applications import Starlette

    from voxcall.llm import LLMBackend
    from voxcall.llm.local.turn_end import TurnEndJudge
    from voxcall.serving.admission import Admission
    from voxcall.speech import TTS
    from voxcall.speech.voice import Voice
    from voxcall.speech.voices import VoiceCatalog

FRAME_SLACK_BYTES = 1_048_576
"""How far past ``max_frame_bytes`` the WebSocket layer still delivers a message. A message up to that size reaches
the app, which answers it with an ``error`` event and keeps the session; only a larger one makes the WebSocket layer
close the connection (code 1009) without reading it, which bounds the memory a client can make us hold."""

WS_IMPLEMENTATION = "websockets-sansio"
"""uvicorn's WebSocket implementation: the sans-I/O one on ``websockets`` (the legacy ``"websockets"`` one is
deprecated). Both honour ``ws_max_size``."""

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Signals that stop the server gracefully."""

CLOSE_TIMEOUT = 5
"""Seconds uvicorn waits, once the sessions are drained and closed, for the connections and their handlers to end
(a session's own MCP servers stop there) before it cancels them and stops the app."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Server:
    """What :func:`run_server` serves: the effective settings (the backend kind resolved), the web app, the LLM
    backend it answers with, the shared speech models (None: text only) and the app's admission (its session
    limits, drained when the server stops)."""

    settings: ServerSettings
    app: Starlette
    backend: LLMBackend
    voice: Voice | None
    admission: Admission
    delegates: dict[str, LLMBackend] = field(default_factory=dict)
    """The named backends of ``live.backends``."""

    def summary(self) -> str:
        """One line saying what is served: URL, playground page, backend, speech, prefetch, auth (never a key)."""
        settings = self.settings
        host = f"[{settings.host}]" if ":" in settings.host else settings.host
        port = settings.port or "<free port>"  # port 0: the system picks one; uvicorn's log line names it
        model = f" ({settings.model})" if settings.model else ""
        thinker = getattr(self.backend, "thinker", None)  # a Duet's
        talker: LLMBackend = getattr(self.backend, "talker", self.backend)
        llm = f"{talker.name}{model}" + (f" + thinker {thinker.name}" if thinker is not None else "")
        return (f"voxcall serving ws://{host}:{port}/v1/realtime · GPT-Live ws://{host}:{port}/v1/live/sessions · "
                f"playground http://{host}:{port}/ · "
                f"llm {llm} · "
                f"speech {_on_off(self.voice is not None)} · prefetch {_on_off(settings.session.prefetch)} · "
                f"auth {_on_off(bool(settings.client_keys()))}")


def build_server(settings: ServerSettings, startup: Startup | None = None) -> Server:
    """The server ``settings`` describe, ready to run.

    Resolves the backend kind (a note when the scripted demo stands in for the local model), loads the speech
    models first (the quicker failure), then the backend, each as a ``startup`` step. Raises :class:`ConfigError`
    when the backend cannot be built (unknown kind, missing model, an option it cannot honour, unreadable script …)
    or when speech is required (``speech.enabled: true``) and a model is missing.
    """
    from voxcall.app import create_app
    from voxcall.serving.admission import Admission

    startup = startup or Startup()
    warn_if_open(settings)
    settings = resolve_llm(settings, startup)
    note_missing_thinker(settings, startup)
    voice = load_speech(settings.speech, startup)
    if voice is not None and settings.profiles:
        load_profile_voices(settings, voice, startup)
    with startup.step(f"{settings.llm} LLM") as step:
        backend = build_backend(settings)
        step.name = backend.name
    delegates = build_delegates(settings, startup)
    admission = Admission(settings.max_sessions, settings.max_sessions_per_key, settings.shutdown_close_code)
    app = create_app(settings, backend, voice=voice, admission=admission, delegates=delegates)
    return Server(settings, app, backend, voice, admission, delegates)


def build_delegates(settings: ServerSettings, startup: Startup) -> dict[str, LLMBackend]:
    """The named backends of ``live.backends`` (for the tasks a GPT-Live voice delegates), each built from the
    server's backend settings with its own over them, as a ``startup`` step; never behind the ``thinker:``, which
    decides for the server's own backend only."""
    delegates: dict[str, LLMBackend] = {}
    for name, overrides in settings.live.backends.items():
        update = dict(overrides, thinker=settings.thinker.model_copy(update={"model": None}))
        if update.get("api_key") is not None:
            update["api_key"] = SecretStr(str(update["api_key"]))
        if update.get("script") is not None:
            update["script"] = Path(update["script"])
        with startup.step(f"{name} LLM (live.backends)"):
            delegates[name] = build_backend(settings.model_copy(update=update))
    return delegates


def resolve_llm(settings: ServerSettings, startup: Startup) -> ServerSettings:
    """``settings`` with the backend kind decided (see :func:`voxcall.llm.resolve_kind`), noting it when "auto"
    falls back to the scripted demo."""
    from voxcall.llm import FALLBACK_KIND, LOCAL_KIND, resolve_kind
    from voxcall.llm.catalog import CATALOG, DEFAULT_MODEL, install_hint

    kind = resolve_kind(settings.llm, settings.model)
    if settings.llm is None and kind == FALLBACK_KIND:
        startup.note(f"the local model is not installed ({LOCAL_KIND} needs xllamacpp and {DEFAULT_MODEL}: "
                     f"make install, or {install_hint(CATALOG[DEFAULT_MODEL])}): answering with the "
                     f"{FALLBACK_KIND} demo backend; choose one with --llm")
    return settings.model_copy(update={"llm": kind})


def note_missing_thinker(settings: ServerSettings, startup: Startup) -> None:
    """Say at start when ``thinker.model: auto`` would pair the talker with a thinker that is not installed (the
    talker then decides alone)."""
    from voxcall.llm import paired_thinker, resolve_kind
    from voxcall.llm.catalog import DEFAULT_MODEL, install_hint, installed

    paired = paired_thinker(resolve_kind(settings.llm, settings.model), settings.model, settings.thinker)
    if paired is not None and installed(paired) is None:
        startup.note(f"the thinker {paired.name} is not installed ({install_hint(paired)}): "
                     f"{settings.model or DEFAULT_MODEL} decides alone")


def build_backend(settings: ServerSettings) -> LLMBackend:
    """The LLM backend ``settings`` describe ("auto" resolved here too), behind a thinker when the ``thinker:``
    section names one or pairs the talker with one (``auto``: :func:`voxcall.llm.resolve_thinker`); raises
    :class:`ConfigError` when it cannot be built."""
    from voxcall.llm import resolve_kind, resolve_thinker

    kind = resolve_kind(settings.llm, settings.model)
    talker = _create_backend(
        kind, "LLM backend", settings, model=settings.model,
        base_url=settings.base_url, api_key=settings.api_key.get_secret_value() if settings.api_key else None,
        tool_format=settings.tool_format, script=settings.script, media=model_inputs(settings))
    thinker = resolve_thinker(kind, settings.model, settings.thinker)
    return talker if thinker is None else with_thinker(talker, thinker, kind, settings)


def with_thinker(talker: LLMBackend, model: str, kind: str, settings: ServerSettings) -> LLMBackend:
    """``talker`` (of backend ``kind``) as the voice of a :class:`~voxcall.llm.local.duet.Duet` whose thinker is
    ``model`` on the ``thinker:`` section's backend, acknowledging and giving up in the user's language
    (:mod:`voxcall.language`); :class:`ConfigError` when the thinker cannot be built (the talker is closed then)."""
    from voxcall.language import acknowledgement, giving_up
    from voxcall.llm import talker_languages
    from voxcall.llm.local.duet import Duet, DuetOptions

    thinker = settings.thinker
    try:
        decider = _create_backend(thinker.llm, "thinker", settings, model=model, base_url=thinker.base_url,
                                  api_key=thinker.api_key.get_secret_value() if thinker.api_key else None)
    except ConfigError:
        asyncio.run(talker.aclose())
        raise
    turns = itertools.count()
    return Duet(talker, decider, acknowledge=lambda said: acknowledgement(None, said, next(turns)),
                fallback=lambda said: giving_up(None, said),
                options=DuetOptions(acknowledge_after_s=thinker.acknowledge_after_ms / 1000,
                                    deadline_s=thinker.deadline_s,
                                    talker_languages=talker_languages(kind, settings.model)))


def _create_backend(kind: str, role: str, settings: ServerSettings, **options: Any) -> LLMBackend:
    """:func:`voxcall.llm.create_backend` for ``kind`` with ``options``; :class:`ConfigError` naming the ``role``
    when it fails. The session's ``llm_timeout`` is also the OpenAI kinds' HTTP timeout; the ``local:`` section is
    the llama.cpp kinds' knobs."""
    from voxcall.llm import REMOTE_KINDS, LLMError, create_backend

    try:
        return create_backend(kind, timeout=settings.session.llm_timeout if kind in REMOTE_KINDS else None,
                              local=settings.local, **options)
    except (ValueError, OSError, yaml.YAMLError, LLMError) as exc:
        message = " ".join(str(exc).split())
        raise ConfigError(f"cannot create the {kind!r} {role}: {message}") from None


def model_inputs(settings: ServerSettings) -> frozenset[ModelInput]:
    """What the model takes besides text: ``model_inputs``, with audio when sessions send it audio by default
    (``session.audio_input: direct``)."""
    direct = settings.session.audio_input == "direct"
    return frozenset(settings.model_inputs) | (frozenset({"audio"}) if direct else frozenset())


def load_speech(speech: SpeechSettings, startup: Startup) -> Voice | None:
    """The shared speech models ``speech`` asks for, each loaded once as a ``startup`` step; None when speech is
    off, or (with a note) when a model is missing and speech was not required."""
    from voxcall.speech import VAD, SileroVAD, SpeechModelError, WebRtcVAD, get_silero, get_whisper
    from voxcall.speech.voice import Voice

    if speech.enabled is False:
        return None
    vad: Callable[[], VAD] = WebRtcVAD
    try:
        if speech.vad == "silero":
            with startup.step("Silero VAD"):
                vad = partial(SileroVAD, get_silero())
        else:
            with startup.step("WebRTC VAD"):
                WebRtcVAD()  # per-stream state: building one checks that webrtcvad is installed
        with startup.step(f"Whisper {Path(speech.stt_model).name if speech.stt_model else 'tiny.en'}"):
            stt = get_whisper(speech.stt_model)
        tts, voices = _load_tts(speech, startup)
    except SpeechModelError as exc:
        if speech.enabled:
            raise ConfigError(f"cannot load the speech models: {exc}") from None
        startup.note(f"serving text only, without speech: {exc}")
        return None
    return Voice(stt=stt, tts=tts, vad=vad, voices=voices, turn_end=load_turn_end_judge(startup))


def load_profile_voices(settings: ServerSettings, voice: Voice, startup: Startup) -> None:
    """Load the voices the agent profiles speak with besides the default (a profile's ``voice``, or the voice for its
    ``language``), each as a ``startup`` step, so that no first answer waits for one; a voice that will not load is
    noted (its sessions speak with the default), and the ``baker`` voice's licence is noted when it loads."""
    from voxcall.speech import SpeechModelError, baker

    voices = voice.voices
    wanted = {profile.voice or voices.for_language(profile.language) for profile in settings.profiles.values()}
    for name in sorted(name for name in wanted - {voices.default} if voices.knows(name)):
        try:
            with startup.step(f"{name} voice (agent profiles)"):
                voices.load(name)
        except SpeechModelError as exc:
            startup.note(f"the {name} voice of an agent profile will not load: {exc}")
            continue
        if name == baker.NAME:
            startup.note(f"the {baker.NAME} voice speaks Chinese for agent profiles; licence: {baker.LICENCE}")


def load_turn_end_judge(startup: Startup) -> TurnEndJudge | None:
    """``semantic_vad``'s judge, hearing the sound too when Smart Turn is installed, as a ``startup`` step; None
    (with a note: fixed silences) when its words model is missing or will not load. A Smart Turn that will not
    load leaves the words alone, with a note."""
    from voxcall.llm.local.turn_end import JUDGE_MODEL, load_judge
    from voxcall.packaged import PackagedFileError
    from voxcall.speech import smart_turn

    with startup.step("turn-end judge"):
        try:
            sound = smart_turn.load()
            alone = f"voxcall models install {smart_turn.NAME} adds its sound"
        except (PackagedFileError, ImportError, OSError) as exc:  # a damaged file, or no onnxruntime
            sound, alone = None, f"Smart Turn would not load ({exc})"
        try:
            judge = load_judge(sound)
        except (ImportError, OSError, ValueError, RuntimeError) as exc:  # no llama.cpp, or the model will not load
            judge, why = None, f"the judge could not be loaded ({exc})"
        else:
            why = f"its model is not installed (voxcall models install {JUDGE_MODEL})"
    if judge is None:
        startup.note(f"semantic_vad ends turns after fixed silences: {why}")
    elif judge.sound is None:
        startup.note(f"semantic_vad judges the end of a turn by its words alone: {alone}")
    return judge


def _load_tts(speech: SpeechSettings, startup: Startup) -> tuple[TTS, VoiceCatalog]:
    """The default voice, loaded, and the catalog of every voice (:mod:`voxcall.speech.voices`): the chosen Piper
    voice; without one, the packaged voice, or espeak-ng (with a note) when that is missing and espeak-ng is on
    ``PATH``."""
    from voxcall.speech import EspeakTTS, get_piper, load_default_tts
    from voxcall.speech.voices import ESPEAK_PREFIX, VoiceCatalog

    voices = VoiceCatalog.configured(speech.voices, speech.tts_voice)
    if speech.tts_voice is not None:
        with startup.step(f"Piper {voices.default}"):
            return get_piper(speech.tts_voice), voices
    with startup.step("Piper joe") as step:
        tts = load_default_tts()
        if isinstance(tts, EspeakTTS):
            step.name = "espeak-ng"
    if isinstance(tts, EspeakTTS):
        startup.note("the packaged Piper voice is not installed (make install): speaking with espeak-ng")
        return tts, voices.with_default(f"{ESPEAK_PREFIX}{tts.voice}")
    return tts, voices


def warn_if_open(settings: ServerSettings) -> None:
    """Log a warning when ``insecure_no_auth`` actually leaves a non-loopback port open to anyone."""
    if settings.insecure_no_auth and not is_loopback(settings.host) and not settings.client_keys():
        log.warning("--insecure-no-auth: %s:%d accepts clients without an API key; anyone who can reach it "
                    "can use the server and its LLM account", settings.host, settings.port)


def configure_logging(level: str) -> None:
    """Send voxcall's (and other libraries') log records to stderr at ``level``, formatted like uvicorn's own
    (``INFO:     message``, coloured on a terminal) so the server's log reads as one."""
    from uvicorn.config import LOG_LEVELS
    from uvicorn.logging import DefaultFormatter

    handler = logging.StreamHandler()
    handler.setFormatter(DefaultFormatter("%(levelprefix)s %(message)s"))
    logging.basicConfig(level=LOG_LEVELS[level], handlers=[handler])


def run_server(server: Server) -> None:
    """Serve ``server`` with uvicorn until it is stopped (Ctrl-C, SIGTERM), then close its backend.

    A stop drains the sessions first: new connections are refused (503), running responses get ``shutdown_grace``
    seconds to finish, every session is closed with ``shutdown_close_code``; then uvicorn shuts down (waiting at most
    :data:`CLOSE_TIMEOUT` for the connections to end) and stops the MCP servers."""
    import uvicorn

    from voxcall.serving.draining import DrainingServer

    settings = server.settings
    config = uvicorn.Config(
        server.app, host=settings.host, port=settings.port, log_level=settings.log_level, ws=WS_IMPLEMENTATION,
        ws_max_size=ws_max_size(settings.session.max_frame_bytes), timeout_graceful_shutdown=CLOSE_TIMEOUT,
    )
    logging.getLogger("uvicorn.error").addFilter(_quiet_denials)
    web = DrainingServer(config, server.admission, settings.shutdown_grace)
    try:
        with _stop_signals_interrupt(), asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
            runner.run(_serve_then_close(web, [server.backend, *server.delegates.values()]))
    except KeyboardInterrupt:  # the stop signal, re-raised by uvicorn after its graceful shutdown
        pass


_DENIAL_MISREPORT = "ASGI callable returned without completing handshake."
"""What uvicorn's sans-I/O WebSocket layer logs as an error after every refusal sent as an HTTP response (the
denial-response extension; it never marks that handshake complete). Refusals are voxcall's normal answer to a full
server, so the line would flood the log of a busy one; uvicorn already logs each refusal with its status."""


def _quiet_denials(record: logging.LogRecord) -> bool:
    """Drop :data:`_DENIAL_MISREPORT` (voxcall's app completes every handshake it does not refuse)."""
    return record.getMessage() != _DENIAL_MISREPORT


def ws_max_size(max_frame_bytes: int) -> int:
    """The WebSocket layer's message limit: ``max_frame_bytes`` plus :data:`FRAME_SLACK_BYTES`, so that a
    somewhat oversized message reaches the app and gets a protocol error instead of a dropped connection."""
    return max_frame_bytes + FRAME_SLACK_BYTES


async def _serve_then_close(web: uvicorn.Server, backends: list[LLMBackend]) -> None:
    """Run ``web`` and close ``backends`` once it has stopped, however it stopped."""
    try:
        await web.serve()
    finally:
        for backend in backends:
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


def _on_off(flag: bool) -> str:
    """``on`` or ``off``."""
    return "on" if flag else "off"


def _interrupt(number: int, frame: FrameType | None) -> NoReturn:
    """Signal handler: stop whatever runs with :class:`KeyboardInterrupt`."""
    raise KeyboardInterrupt
