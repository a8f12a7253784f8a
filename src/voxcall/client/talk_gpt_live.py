"""``voxcall talk --live``: the talk modes of :mod:`voxcall.client.talk` over GPT-Live (``/v1/live/sessions``).

- ``--wav IN.wav``: the file is streamed as a microphone would (20 ms appends, in real time unless ``fast``), then
  :data:`TAIL_MS` of silence so that the server's VAD ends the turn; the spoken answer goes to ``--out``.
- ``--text "…"``: GPT-Live has no user text event. The question opens the session as its startup ``input`` (a
  user message: what it is), and a ``session.commentary.append`` with no delegation has the voice answer it.
- neither: the microphone and speaker until Ctrl-C; when the server hears the user (a transcript fragment),
  local playback stops (the server has stopped the voice already; there is nothing to truncate).

GPT-Live always answers in audio; without ``--out`` the audio is dropped and the transcript printed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from voxcall.client.devices import import_sounddevice, open_devices
from voxcall.client.display import ConsoleReporter
from voxcall.client.gpt_live import LiveConversation
from voxcall.client.session import AUDIO_FORMAT, AudioSink
from voxcall.client.talk import (
    CHUNK_MS,
    AudioCollector,
    TalkOptions,
    stream_audio,
    stream_microphone,
    write_answer,
)
from voxcall.client.transport import ClientError, WebSocketTransport
from voxcall.client.wavfile import read_wav

TAIL_MS = 1500
"""Silence sent after a WAV file, so that the server's VAD surely ends the turn."""

HEARD_WITHIN_S = 20.0
"""How long after a WAV file the server may take to show it heard speech before the file counts as silent."""


async def talk_wav(options: TalkOptions, wav: Path, out: Path | None, reporter: ConsoleReporter, *,
                   fast: bool = False) -> None:
    """Say ``wav`` to the server and wait for the voice's answer (its audio to ``out`` when given)."""
    audio = read_wav(wav, AUDIO_FORMAT.rate)
    collector = AudioCollector()
    async with await _open(options, reporter, collector) as conversation:
        await conversation.start(instructions=options.instructions)
        reporter.note(f"streaming {wav} ({len(audio) / AUDIO_FORMAT.rate:.1f} s{', fast' if fast else ''})")
        silence = np.zeros(AUDIO_FORMAT.rate * TAIL_MS // 1000, np.int16)
        await stream_audio(conversation, np.concatenate([audio, silence]), realtime=not fast)
        if not await conversation.wait_heard(HEARD_WITHIN_S):
            raise ClientError(conversation.failure or f"the server heard no speech in {wav}")
        await conversation.wait_answered(options.timeout)
    write_answer(out, collector)


async def talk_text(options: TalkOptions, text: str, out: Path | None, reporter: ConsoleReporter) -> None:
    """A typed question (the session's startup input); the answer is printed, its audio written to ``out``."""
    collector = AudioCollector()
    async with await _open(options, reporter, collector) as conversation:
        await conversation.start(instructions=options.instructions, question=text)
        reporter.user_transcript(text)
        await conversation.ask()
        await conversation.wait_answered(options.timeout)
    write_answer(out, collector)


async def talk_live(options: TalkOptions, reporter: ConsoleReporter) -> None:
    """Talk through the microphone and speaker until Ctrl-C or the server goes away; errors are reported and the
    conversation goes on."""
    sd = import_sounddevice()
    loop = asyncio.get_running_loop()
    with open_devices(sd, loop, CHUNK_MS, AUDIO_FORMAT.rate) as (heard, player):
        transport = await WebSocketTransport.connect(options.url, options.api_key)
        async with LiveConversation(transport, reporter=reporter, on_audio=player.feed,
                                    on_user_speech=player.interrupt, strict=False) as conversation:
            await conversation.start(instructions=options.instructions)
            reporter.note("listening: speak when you like (headphones keep the voice from hearing itself); "
                          "Ctrl-C to stop")
            await stream_microphone(conversation, heard)


async def _open(options: TalkOptions, reporter: ConsoleReporter, on_audio: AudioSink) -> LiveConversation:
    transport = await WebSocketTransport.connect(options.url, options.api_key)
    return LiveConversation(transport, reporter=reporter, on_audio=on_audio)
