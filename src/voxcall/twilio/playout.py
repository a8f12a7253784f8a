"""What of the agent's speech the caller has heard.

Twilio plays the audio it is sent as it arrives; voxcall follows each audio chunk with a ``mark``, and Twilio
sends the mark back once the audio before it has been played. When the caller interrupts, the audio sent but not
yet played is dropped (a ``clear``, after which Twilio returns the pending marks at once) and each message
is truncated to what was heard, so the model's record of the conversation holds only the words the caller got.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from voxcall.twilio.frames import MULAW_RATE


@dataclass(frozen=True)
class Cut:
    """Where an interrupted message's audio ends for the caller: ``heard_ms`` of item ``item_id``."""

    item_id: str
    heard_ms: int


class Playout:
    """The marks sent and not yet returned, and how far each message has been played."""

    def __init__(self) -> None:
        self._sent_ms: dict[str, int] = {}  # audio sent per message item
        self._pending: deque[tuple[str, str, int]] = deque()  # (mark name, item, ms of that item sent before it)
        self._heard: dict[str, int] = {}
        self._dropped: set[str] = set()  # marks of cleared audio: Twilio returns them, unplayed
        self._count = 0

    def sent(self, item_id: str, ulaw_bytes: int) -> str:
        """``ulaw_bytes`` of item ``item_id`` went out: the name of the mark to send after them."""
        self._count += 1
        ms = self._sent_ms[item_id] = self._sent_ms.get(item_id, 0) + ulaw_bytes * 1000 // MULAW_RATE
        name = f"voxcall-{self._count}"
        self._pending.append((name, item_id, ms))
        return name

    def played(self, name: str) -> None:
        """Twilio returned mark ``name``: the audio before it has been played (unless it was cleared)."""
        if name in self._dropped:
            self._dropped.discard(name)
            return
        while self._pending:
            pending, item_id, ms = self._pending.popleft()
            self._heard[item_id] = ms
            if pending == name:
                return

    @property
    def playing(self) -> bool:
        """Whether audio was sent that Twilio has not finished playing."""
        return bool(self._pending)

    def interrupt(self) -> list[Cut]:
        """The caller spoke over the agent: the messages whose audio was not all played, and how much of each
        was; their pending marks will come back unplayed."""
        cuts: dict[str, Cut] = {}
        for name, item_id, _ in self._pending:
            self._dropped.add(name)
            cuts.setdefault(item_id, Cut(item_id, self._heard.get(item_id, 0)))
        self._pending.clear()
        return list(cuts.values())
