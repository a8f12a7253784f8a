"""The caller's keypad: DTMF digits gathered into one entry, the way a phone menu reads them.

An entry ends at ``#`` (which is not part of it, unless pressed alone) or after a pause without another key; the
entry then goes to ``on_entry``. With no pause every key is an entry of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

END_KEY = "#"


class Keypad:
    """Gathers keys into entries; :meth:`close` drops an unfinished one (the call ended)."""

    def __init__(self, pause: float, on_entry: Callable[[str], Awaitable[None]]) -> None:
        """``pause``: seconds without a key after which the entry is complete (0: every key at once)."""
        self._pause = pause
        self._on_entry = on_entry
        self._keys: list[str] = []
        self._timer: asyncio.Task[None] | None = None

    async def press(self, key: str) -> None:
        """One key pressed: ``0``–``9``, ``*`` or ``#``."""
        self._stop_timer()
        if key == END_KEY or self._pause == 0:
            if key != END_KEY or not self._keys:
                self._keys.append(key)
            await self._enter()
            return
        self._keys.append(key)
        self._timer = asyncio.create_task(self._after_pause(), name="voxcall-keypad")

    def close(self) -> None:
        """Forget the keys of an unfinished entry."""
        self._stop_timer()
        self._keys = []

    async def _after_pause(self) -> None:
        await asyncio.sleep(self._pause)
        self._timer = None
        await self._enter()

    async def _enter(self) -> None:
        keys, self._keys = "".join(self._keys), []
        await self._on_entry(keys)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
