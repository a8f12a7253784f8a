"""What a device hears, and when: a device session's :class:`~voxcall.core.playout.Playout`, paced.

A device plays audio only between ``tts``/``start`` and ``tts``/``stop``, decodes each Opus packet into a buffer one
packet long, and holds at most 2.4 s of packets, dropping what comes beyond (firmware ``main/application.cc``,
``main/audio/audio_service.cc``). So :class:`DeviceSpeech` sends, for each response:

- ``tts``/``start`` when the response begins (:meth:`DeviceSpeech.begin`): the device turns to its speaker and, unless
  it listens in realtime mode, mutes its microphone; it waits quietly while the response's tools run;
- the words of each clause (``tts``/``sentence_start``) and the face (``llm``) just before the clause's first packet
  (:meth:`DeviceSpeech.say`);
- the audio in packets of exactly :data:`~voxcall.xiaozhi.messages.PACKET_MS`
  (:class:`~voxcall.xiaozhi.opus.Packetizer`), :data:`LEAD_PACKETS` ahead of the device's speaker and no more, so
  they leave in real time;
- ``tts``/``stop`` once the device has played the last packet (and :data:`DRAIN_MARGIN_MS` more: the network, the
  decoder), or at once when the speech is cleared.

It keeps the clock of the device's speaker: a packet starts playing when the one before it ends, or when it arrives
after a gap. When the speech is cleared (the user spoke over it, or aborted it), what was heard of each message is
what that clock has played by then, to the millisecond; the core cuts the messages to it.

Invariants: messages leave in the order queued; no packet leaves more than ``LEAD_PACKETS`` packets ahead of the
device's speaker; every ``tts``/``start`` sent is followed by one ``tts``/``stop``; nothing of a cleared response is
sent after it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from voxcall.audio.codec import StreamResampler
from voxcall.core.events import OutputAudio
from voxcall.core.playout import Cleared, Heard, PlaybackListener
from voxcall.serving.frames import Message
from voxcall.xiaozhi import messages
from voxcall.xiaozhi.messages import PACKET_MS
from voxcall.xiaozhi.opus import Packetizer

LEAD_PACKETS = 5
"""Packets sent ahead of the device's speaker (300 ms): enough to ride out the network's jitter, little enough that a
barge-in stops the voice almost at once (the open server sends as many)."""

DRAIN_MARGIN_MS = 240
"""How long after the device's speaker has reckoned the last packet played ``tts``/``stop`` is sent: a device turns
to listening on it, and the last packets may still be on their way or in its decoder."""

Send = Callable[[Message | bytes], Awaitable[None]]
"""Writes a JSON message or an audio packet to the device."""

Clock = Callable[[], float]


@dataclass(frozen=True)
class _Packet:
    """One packet of a message's audio: it starts ``item_ms`` into message ``item_id``'s audio."""

    data: bytes
    response_id: str
    item_id: str
    item_ms: int


@dataclass(frozen=True)
class _Say:
    """A JSON message of a response, sent when the queue reaches it; ``opens``: its ``tts``/``start``."""

    message: Message
    response_id: str
    opens: bool = False


@dataclass(frozen=True)
class _End:
    """A response's audio is all queued: ``tts``/``stop`` once it has been played."""

    response_id: str


@dataclass
class _Encoding:
    """One response's audio on its way to packets: resampled to the device's rate, cut into packets."""

    packetizer: Packetizer
    resampler: StreamResampler
    item_id: str = ""
    item_ms: int = 0  # where the next packet starts in the item's audio


@dataclass
class _Playing:
    """The response the device's speaker plays: when each packet sent of it starts playing."""

    response_id: str
    items: set[str] = field(default_factory=set)
    played_ms: dict[str, int] = field(default_factory=dict)  # per item: audio whose packets have all been played
    in_flight: deque[tuple[str, int, float]] = field(default_factory=deque)  # (item, item_ms, starts) of the rest
    heard: bool = False  # playback_started was reported

    def heard_by(self, now: float) -> tuple[Heard, ...]:
        """What of each message the speaker has played by ``now``."""
        ms = dict.fromkeys(self.items, 0) | self.played_ms
        for item_id, item_ms, starts in self.in_flight:
            if starts < now:
                ms[item_id] = max(ms[item_id], item_ms + round(min((now - starts) * 1000, PACKET_MS)))
        return tuple(Heard(item_id, self.response_id, end) for item_id, end in sorted(ms.items()))


class DeviceSpeech:
    """One device session's speech, written by one task (:meth:`start`); ``send`` writes to the device."""

    def __init__(self, send: Send, rate: int, *, clock: Clock | None = None) -> None:
        """``rate``: the rate of the audio the device is sent (its ``hello`` says so); ``clock``: seconds (the
        event loop's)."""
        self._send = send
        self._rate = rate
        self._clock = clock or asyncio.get_running_loop().time
        self._queue: deque[_Packet | _Say | _End] = deque()
        self._ready = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._listeners: list[PlaybackListener] = []
        self._encoding: dict[str, _Encoding] = {}  # per response whose audio is being captured
        self._begun: set[str] = set()  # responses begun whose tts:stop is not queued yet (a cleared one is not)
        self._items: dict[str, set[str]] = {}  # per response begun: the messages whose audio was captured
        self._open: _Playing | None = None  # the response whose tts:start was sent and tts:stop not yet
        self._speaker_free = 0.0  # when the device's speaker will have played every packet sent

    def start(self) -> None:
        """Start the writer."""
        self._writer = asyncio.create_task(self._write(), name="voxcall-xiaozhi-speech")

    async def close(self) -> None:
        """Stop the writer; nothing more is sent."""
        self._queue.clear()
        if self._writer is not None:
            self._writer.cancel()
            await asyncio.wait([self._writer])

    # -- the playout contract -------------------------------------------------------------------------------------

    def watch(self, listener: PlaybackListener) -> None:
        self._listeners.append(listener)

    def begin(self, response_id: str) -> None:
        """A response begins: the device turns to its speaker (``tts``/``start``) when the queue reaches it."""
        self._begun.add(response_id)
        self._put(_Say(messages.tts("start"), response_id, opens=True))

    def say(self, response_id: str, message: Message) -> None:
        """Send ``message`` (a clause's words, the face) in its place: before the audio captured after it."""
        if response_id in self._begun:
            self._put(_Say(message, response_id))

    def capture(self, audio: OutputAudio) -> None:
        """Queue a chunk of a response's speech, as packets."""
        if audio.response_id not in self._begun:
            return
        self._items.setdefault(audio.response_id, set()).add(audio.item_id)
        encoding = self._encoding.get(audio.response_id)
        if encoding is None:
            encoding = self._encoding[audio.response_id] = _Encoding(
                Packetizer(self._rate), StreamResampler(audio.fmt.rate, self._rate), audio.item_id, audio.start_ms)
        if audio.item_id != encoding.item_id:  # a new message: the last one's tail goes out on its own
            self._queue_packets(audio.response_id, encoding, encoding.packetizer.flush())
            encoding.item_id, encoding.item_ms = audio.item_id, audio.start_ms
        pcm = encoding.resampler.process(audio.pcm)
        self._queue_packets(audio.response_id, encoding, encoding.packetizer.feed(pcm))

    def flush(self, response_id: str) -> None:
        """The response's speech is all captured: ``tts``/``stop`` once the device has played it."""
        if response_id not in self._begun:
            return
        self._begun.discard(response_id)
        encoding = self._encoding.pop(response_id, None)
        if encoding is not None:
            tail = encoding.packetizer.feed(encoding.resampler.flush()) + encoding.packetizer.flush()
            self._queue_packets(response_id, encoding, tail)
        self._put(_End(response_id))

    async def clear(self) -> Cleared | None:
        """Stop the speech now: nothing queued is sent, what is still on its way from the responses begun is
        dropped, and the device is told its speech is over (``tts``/``stop``). What of each message of the response
        it was playing has been heard; None when it was playing none."""
        self._queue.clear()
        self._ready.set()
        self._begun.clear()
        self._encoding.clear()
        items, self._items = self._items, {}
        playing, self._open = self._open, None
        if playing is None:
            return None
        playing.items |= items.get(playing.response_id, set())  # captured, not all sent: heard in part or not
        now = self._clock()
        self._speaker_free = now
        heard = playing.heard_by(now)
        await self._send(messages.tts("stop"))
        self._finished(playing, heard, interrupted=True)
        return Cleared(playing.response_id, heard)

    # -- the writer -----------------------------------------------------------------------------------------------

    def _queue_packets(self, response_id: str, encoding: _Encoding, packets: list[bytes]) -> None:
        for packet in packets:
            self._put(_Packet(packet, response_id, encoding.item_id, encoding.item_ms))
            encoding.item_ms += PACKET_MS

    def _put(self, entry: _Packet | _Say | _End) -> None:
        self._queue.append(entry)
        self._ready.set()

    def _due(self, entry: _Packet | _Say | _End) -> float:
        """When ``entry`` may leave (the clock's seconds)."""
        if isinstance(entry, _Packet):
            return self._speaker_free - LEAD_PACKETS * PACKET_MS / 1000
        if isinstance(entry, _End):
            return self._speaker_free + DRAIN_MARGIN_MS / 1000
        return 0.0

    async def _write(self) -> None:
        while True:
            await self._head_due()
            await self._out(self._queue.popleft())

    async def _head_due(self) -> None:
        """Wait until there is an entry and it may leave; a clear() or a new entry wakes the wait early."""
        while True:
            self._ready.clear()
            wait = self._due(self._queue[0]) - self._clock() if self._queue else None
            if wait is not None and wait <= 0:
                return
            with contextlib.suppress(TimeoutError):  # asyncio.timeout: wait_for may swallow a cancel (3.11)
                async with asyncio.timeout(wait):
                    await self._ready.wait()

    async def _out(self, entry: _Packet | _Say | _End) -> None:
        if isinstance(entry, _Say):
            if entry.opens:
                self._open = _Playing(entry.response_id)
            await self._send(entry.message)
        elif isinstance(entry, _Packet):
            self._played(entry)
            await self._send(entry.data)
        elif self._open is not None and self._open.response_id == entry.response_id:
            playing, self._open = self._open, None
            playing.items |= self._items.pop(entry.response_id, set())
            await self._send(messages.tts("stop"))
            self._finished(playing, playing.heard_by(self._clock()), interrupted=False)

    def _played(self, packet: _Packet) -> None:
        """``packet`` goes out: it plays once the speaker has played what was sent before it."""
        now = self._clock()
        starts = max(self._speaker_free, now)
        self._speaker_free = starts + PACKET_MS / 1000
        playing = self._open
        if playing is None or playing.response_id != packet.response_id:
            return
        playing.items.add(packet.item_id)
        while playing.in_flight and playing.in_flight[0][2] + PACKET_MS / 1000 <= now:
            item_id, item_ms, _ = playing.in_flight.popleft()
            playing.played_ms[item_id] = max(playing.played_ms.get(item_id, 0), item_ms + PACKET_MS)
        playing.in_flight.append((packet.item_id, packet.item_ms, starts))
        if not playing.heard:
            playing.heard = True
            for listener in self._listeners:
                listener.playback_started(packet.response_id)

    def _finished(self, playing: _Playing, heard: tuple[Heard, ...], *, interrupted: bool) -> None:
        if not playing.heard:
            return
        position = sum(part.audio_end_ms for part in heard)
        for listener in self._listeners:
            listener.playback_finished(playing.response_id, position, interrupted)
