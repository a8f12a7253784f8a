"""What of the agent's speech the caller has heard: the call's :class:`~voxcall.core.playout.Playout`, by marks.

Twilio plays the audio it is sent as it arrives; voxcall follows each audio chunk with a ``mark``, and Twilio
sends the mark back once the audio before it has been played. When the caller interrupts, the session clears the
playout: a ``clear`` frame makes Twilio drop the audio sent but not yet played (and return its pending marks at once,
unplayed), audio still on its way from that response is dropped, and the playout says how much of each message was
heard, so the session cuts each message to the words the caller got.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from voxcall.core.events import OutputAudio
from voxcall.core.playout import Cleared, Heard, PlaybackListener


@dataclass(frozen=True)
class _Pending:
    """A mark sent and not yet returned: the audio of ``item_id`` up to ``ms`` plays before it."""

    name: str
    item_id: str
    response_id: str
    ms: int


class MarkPlayout:
    """The marks sent and not yet returned, and how far each message has been played; ``send_clear`` tells Twilio
    to drop what it has not played."""

    def __init__(self, send_clear: Callable[[], Awaitable[None]]) -> None:
        self._send_clear = send_clear
        self._sent_ms: dict[str, int] = {}  # audio sent per message item
        self._pending: deque[_Pending] = deque()
        self._heard: dict[str, int] = {}  # audio played per message item
        self._dropped: set[str] = set()  # marks of cleared audio: Twilio returns them, unplayed
        self._silenced: set[str] = set()  # responses cleared: audio still on its way from them is dropped
        self._complete: set[str] = set()  # responses whose audio is all sent
        self._items: dict[str, set[str]] = {}  # the message items of each response
        self._playing: str | None = None  # the response heard now
        self._listeners: list[PlaybackListener] = []
        self._count = 0

    @property
    def playing(self) -> bool:
        """Whether audio was sent that Twilio has not finished playing."""
        return bool(self._pending)

    def watch(self, listener: PlaybackListener) -> None:
        self._listeners.append(listener)

    def capture(self, audio: OutputAudio) -> None:
        self.mark(audio)

    def mark(self, audio: OutputAudio) -> str | None:
        """``audio`` goes to Twilio: the name of the mark to send after it (None: its response was cleared, it is
        not sent)."""
        if audio.response_id in self._silenced:
            return None
        self._count += 1
        ms = self._sent_ms[audio.item_id] = self._sent_ms.get(audio.item_id, 0) + audio.duration_ms
        pending = _Pending(f"voxcall-{self._count}", audio.item_id, audio.response_id, ms)
        self._items.setdefault(audio.response_id, set()).add(audio.item_id)
        self._pending.append(pending)
        if self._playing is None:
            self._playing = audio.response_id
            for listener in self._listeners:
                listener.playback_started(audio.response_id)
        return pending.name

    def flush(self, response_id: str) -> None:
        """The response's audio is all sent: once Twilio has played it, it is over."""
        self._silenced.discard(response_id)
        self._complete.add(response_id)
        self._settle()

    def played(self, name: str) -> None:
        """Twilio returned mark ``name``: the audio before it has been played (unless it was cleared)."""
        if name in self._dropped:
            self._dropped.discard(name)
            return
        while self._pending:
            pending = self._pending.popleft()
            self._heard[pending.item_id] = pending.ms
            if pending.name == name:
                break
        self._settle()

    async def clear(self) -> Cleared | None:
        """The caller spoke over the agent: Twilio drops what it has not played; what of each message cut short was
        heard (None: nothing was playing)."""
        if not self._pending:
            return None
        response_id = self._pending[0].response_id
        heard: dict[str, Heard] = {}
        for pending in self._pending:
            self._dropped.add(pending.name)
            self._silenced.add(pending.response_id)
            heard.setdefault(pending.item_id,
                             Heard(pending.item_id, pending.response_id, self._heard.get(pending.item_id, 0)))
        self._pending.clear()
        await self._send_clear()
        self._finish(response_id, interrupted=True)
        return Cleared(response_id, tuple(heard.values()))

    def _settle(self) -> None:
        """The speech is over once every mark came back and its response is all sent."""
        if self._playing is not None and not self._pending and self._playing in self._complete:
            self._finish(self._playing, interrupted=False)

    def _finish(self, response_id: str, *, interrupted: bool) -> None:
        self._playing = None
        self._complete.discard(response_id)
        position = sum(self._heard.get(item, 0) for item in self._items.pop(response_id, ()))
        for listener in self._listeners:
            listener.playback_finished(response_id, position, interrupted)
