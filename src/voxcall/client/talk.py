"""``voxcall talk``: talk to a voxcall (or any OpenAI Realtime) server from a WAV file, typed text or the microphone.

- ``--wav IN.wav``: the file is streamed like a microphone would (20 ms chunks, in real time unless ``fast``), then
  enough silence for the server's VAD to end the turn; the spoken answer(s) go to ``--out`` as a 24 kHz WAV.
- ``--text "…"``: a typed turn; the answer is text, or speech written to ``--out``.
- neither: live, with the microphone and speaker (:mod:`voxcall.client.devices`), until Ctrl-C.

Headless modes end once the conversation is idle: every turn heard is answered, tool round trips included.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from voxcall.client.devices import import_sounddevice, open_devices
from voxcall.client.display import ConsoleReporter
from voxcall.client.session import ANSWER_TIMEOUT, AUDIO_FORMAT, ClientSession
from voxcall.client.tools import ClientTools
from voxcall.client.transport import ClientError, WebSocketTransport
from voxcall.client.wavfile import read_wav, write_wav

CHUNK_MS = 20
"""Audio per ``input_audio_buffer.append``, as a microphone would deliver it."""

TAIL_MARGIN_MS = 500
"""Silence sent after a WAV file beyond the server's ``silence_duration_ms``, so its VAD surely ends the turn."""


@dataclass(frozen=True)
class TalkOptions:
    """Where to connect and what every talk mode shares."""

    url: str
    api_key: str | None = None
    tools: ClientTools | None = None
    instructions: str | None = None
    timeout: float = ANSWER_TIMEOUT
    """Seconds to wait for the answer (headless modes)."""


class AudioCollector:
    """Keeps every chunk of output audio, in arrival order (an :data:`~voxcall.client.session.AudioSink`)."""

    def __init__(self) -> None:
        self.chunks: list[npt.NDArray[np.int16]] = []

    def __call__(self, item_id: str, pcm: npt.NDArray[np.int16]) -> None:
        self.chunks.append(pcm)

    def pcm(self) -> npt.NDArray[np.int16]:
        """All the audio received, joined."""
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.int16)


async def talk_wav(options: TalkOptions, wav: Path, out: Path | None, reporter: ConsoleReporter, *,
                   fast: bool = False) -> None:
    """Say ``wav`` to the server and write the spoken answer to ``out`` (text answers when ``out`` is None)."""
    audio = read_wav(wav, AUDIO_FORMAT.rate)
    collector = AudioCollector()
    async with await _open(options, reporter, collector) as session:
        await session.update(**session_fields(options, spoken=out is not None))
        detection = session.turn_detection
        if detection is None:
            raise ClientError("the server's session has no turn detection, so it would never answer the file")
        reporter.note(f"streaming {wav} ({len(audio) / AUDIO_FORMAT.rate:.1f} s{', fast' if fast else ''})")
        tail_ms = int(detection.get("silence_duration_ms", 500)) + TAIL_MARGIN_MS
        silence = np.zeros(AUDIO_FORMAT.rate * tail_ms // 1000, np.int16)
        await stream_audio(session, np.concatenate([audio, silence]), realtime=not fast)
        await session.sync()
        if session.turns_heard == 0:
            raise ClientError(f"the server heard no speech in {wav}")
        await session.wait_idle(options.timeout)
    write_answer(out, collector)


async def talk_text(options: TalkOptions, text: str, out: Path | None, reporter: ConsoleReporter) -> None:
    """A typed turn; the answer is printed, and spoken into ``out`` when given."""
    collector = AudioCollector()
    async with await _open(options, reporter, collector) as session:
        await session.update(**session_fields(options, spoken=out is not None))
        reporter.user_transcript(text)
        await session.say(text)
        await session.wait_idle(options.timeout)
    write_answer(out, collector)


async def talk_live(options: TalkOptions, reporter: ConsoleReporter) -> None:
    """Talk through the microphone and speaker until Ctrl-C or the server goes away.

    Errors are reported and the conversation goes on. When the user starts speaking, playback stops at once and
    the assistant's message is truncated to what was heard (with the server's ``interrupt_response``, the
    response itself is cancelled by the server).
    """
    sd = import_sounddevice()
    loop = asyncio.get_running_loop()
    with open_devices(sd, loop, CHUNK_MS, AUDIO_FORMAT.rate) as (heard, player):
        transport = await WebSocketTransport.connect(options.url, options.api_key)
        session: ClientSession

        async def barge_in() -> None:
            cut = player.interrupt()
            if cut is not None:
                item_id, heard_ms = cut
                await session.send({"type": "conversation.item.truncate", "item_id": item_id, "content_index": 0,
                                    "audio_end_ms": heard_ms})

        session = ClientSession(transport, reporter=reporter, tools=options.tools, on_audio=player.feed,
                                on_speech_started=barge_in, strict=False)
        async with session:
            await session.update(**session_fields(options, spoken=True))
            reporter.note("listening: speak when you like (headphones keep the assistant from hearing itself); "
                          "Ctrl-C to stop")
            await stream_microphone(session, heard)


class AudioSender(Protocol):
    """What the talk modes stream audio to: a Realtime or a GPT-Live client session."""

    failure: str | None
    ended: asyncio.Event

    async def append(self, pcm: npt.NDArray[np.int16]) -> None:
        """Send 24 kHz samples."""


async def stream_microphone(session: AudioSender, heard: asyncio.Queue[npt.NDArray[np.int16]]) -> None:
    """Send the microphone's chunks as they arrive until the connection ends (or Ctrl-C cancels this); a
    :class:`ClientError` for a send that failed or a session that failed."""
    ended = asyncio.create_task(session.ended.wait())
    sending = asyncio.create_task(_send_microphone(session, heard))
    try:
        done, _ = await asyncio.wait({ended, sending}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (ended, sending):
            task.cancel()
        await asyncio.gather(ended, sending, return_exceptions=True)
    if sending in done:
        sending.result()  # a send that failed: the connection is gone
    if session.failure is not None:
        raise ClientError(session.failure)


async def _send_microphone(session: AudioSender, heard: asyncio.Queue[npt.NDArray[np.int16]]) -> None:
    while True:
        await session.append(await heard.get())


async def stream_audio(session: AudioSender, pcm: npt.NDArray[np.int16], *, realtime: bool) -> None:
    """Append ``pcm`` in :data:`CHUNK_MS` chunks; with ``realtime``, each no earlier than its time on a clock
    started with the first (a deadline per chunk, so the pace never drifts)."""
    loop = asyncio.get_running_loop()
    step = AUDIO_FORMAT.rate * CHUNK_MS // 1000
    start = loop.time()
    for number, offset in enumerate(range(0, len(pcm), step)):
        if realtime:
            await asyncio.sleep(max(0.0, start + number * CHUNK_MS / 1000 - loop.time()))
        if session.failure is not None:
            raise ClientError(session.failure)
        await session.append(pcm[offset:offset + step])


async def _open(options: TalkOptions, reporter: ConsoleReporter, collector: AudioCollector) -> ClientSession:
    transport = await WebSocketTransport.connect(options.url, options.api_key)
    return ClientSession(transport, reporter=reporter, tools=options.tools, on_audio=collector)


def session_fields(options: TalkOptions, *, spoken: bool) -> dict[str, Any]:
    """The ``session.update`` fields for ``options``: tools, instructions, output modality and audio formats."""
    fields: dict[str, Any] = {"output_modalities": ["audio" if spoken else "text"]}
    if options.tools is not None:
        fields["tools"] = options.tools.definitions
    if options.instructions is not None:
        fields["instructions"] = options.instructions
    if spoken:
        fmt = AUDIO_FORMAT.to_wire()
        fields["audio"] = {"input": {"format": fmt}, "output": {"format": fmt}}
    return fields


def write_answer(out: Path | None, collector: AudioCollector) -> None:
    """Write the audio received to ``out`` (nothing without one); a :class:`ClientError` when none came."""
    if out is None:
        return
    pcm = collector.pcm()
    if pcm.size == 0:
        raise ClientError("the server sent no audio (is it running with --no-speech?)")
    write_wav(out, pcm, AUDIO_FORMAT.rate)
