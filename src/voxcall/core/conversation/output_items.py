"""A response's output: its items in order, and the events that announce each change to one.

:class:`OutputItems` is the small sink a response and its server tool calls write to. An item added to the
output is announced (:class:`~voxcall.core.events.OutputItemAdded`) and, unless the response is out of band, joins
its history (:class:`~voxcall.core.events.ItemAdded`); finishing it sends the matching ``done`` events. Events about
an item carry the response id, the item id and its output index (:meth:`OutputItems.index`).
"""

from __future__ import annotations

from typing import Protocol

from voxcall.core.conversation.items import Item
from voxcall.core.events import Emit, ItemAdded, ItemDeleted, ItemDone, OutputItemAdded, OutputItemDone


class History(Protocol):
    """Where a response's items go: ``add`` returns the id of the item before it, ``remove`` takes one back.

    ``conversation_id`` is None for out-of-band responses, whose items are in no conversation.
    """

    @property
    def conversation_id(self) -> str | None: ...

    def add(self, item: Item) -> str | None: ...

    def remove(self, item: Item) -> None: ...


class OutputItems:
    """The output items of response ``response_id``; events go to ``emit``, items to ``history``."""

    def __init__(self, response_id: str, history: History, emit: Emit) -> None:
        self.response_id = response_id
        self.history = history  # a claimed hidden response moves from a deferred history to the conversation
        self.emit = emit
        self.items: list[Item] = []

    def index(self, item: Item) -> int:
        """Where ``item`` stands in the output (its ``output_index``)."""
        return self.items.index(item)

    async def add(self, item: Item) -> None:
        """Append ``item`` to the output (and to the history)."""
        self.items.append(item)
        shown = item.snapshot()
        await self.emit(OutputItemAdded(self.response_id, len(self.items) - 1, shown))
        if self.history.conversation_id is not None:
            previous = self.history.add(item)
            await self.emit(ItemAdded(shown, previous))

    async def done(self, item: Item) -> None:
        """Announce that ``item`` is finished."""
        shown = item.snapshot()
        await self.emit(OutputItemDone(self.response_id, self.index(item), shown))
        if self.history.conversation_id is not None:
            await self.emit(ItemDone(shown))

    async def drop(self, item: Item) -> None:
        """Take back an item that never completed (a call whose arguments broke off): no dangling call stays."""
        item.status = "incomplete"
        if self.history.conversation_id is not None:
            self.history.remove(item)
            await self.emit(ItemDeleted(item.id))
        await self.emit(OutputItemDone(self.response_id, self.index(item), item.snapshot()))
        self.items.remove(item)


class OutOfBand:
    """The history of a ``conversation: "none"`` response: its items join no conversation."""

    conversation_id: str | None = None

    def add(self, item: Item) -> str | None:
        return None

    def remove(self, item: Item) -> None:
        return None
