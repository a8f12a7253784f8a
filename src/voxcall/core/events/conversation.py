"""Events about the conversation's items: added, done, deleted, retrieved, truncated.

Each carries a snapshot of its item (:meth:`~voxcall.core.conversation.items.MessageItem.snapshot`): an event may
wait (behind a hidden response's gate, in a connection's queue) while the item it names changes on.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from voxcall.core.conversation.items import Item


class Placement(enum.Enum):
    """An item event that does not say where the item stands (only ``conversation.item.added`` must)."""

    UNSAID = "unsaid"


UNSAID = Placement.UNSAID


@dataclass(frozen=True, slots=True)
class ItemAdded:
    """An item joined the conversation after ``previous_item_id`` (None: first)."""

    item: Item
    previous_item_id: str | None


@dataclass(frozen=True, slots=True)
class ItemDone:
    """An item is complete (a client's item at once; a response's, a transcribed turn's when finished)."""

    item: Item
    previous_item_id: str | Placement | None = UNSAID


@dataclass(frozen=True, slots=True)
class ItemDeleted:
    """An item left the conversation (deleted by the client, trimmed, or a call that never completed)."""

    item_id: str


@dataclass(frozen=True, slots=True)
class ItemRetrieved:
    """The item a client asked for, and, for a tool call, the ledger's record of it."""

    item: Item
    tool_call: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ItemTruncated:
    """An assistant message's audio was cut at ``audio_end_ms``: its transcript is what was heard by then."""

    item_id: str
    content_index: int
    audio_end_ms: int
