"""A response's output: its items in order, and the events that announce each change to one.

:class:`OutputItems` is the small sink a response and its server tool calls write to. An item added to the
output is announced (``response.output_item.added``) and, unless the response is out of band, joins its history
(``conversation.item.added``); finishing it sends the matching ``.done`` events. Events about an item carry the
response id, the item id and its output index.
"""

from __future__ import annotations

from typing import Any, Protocol

from voxcall.core.conversation.items import Item
from voxcall.core.protocol import event
from voxcall.core.responses.outbox import Send


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

    def __init__(self, response_id: str, history: History, emit: Send) -> None:
        self.response_id = response_id
        self.history = history  # a claimed hidden response moves from a deferred history to the conversation
        self.emit = emit
        self.items: list[Item] = []

    async def add(self, item: Item) -> None:
        """Append ``item`` to the output (and to the history)."""
        self.items.append(item)
        await self.event("response.output_item.added", item, item=item.to_wire())
        if self.history.conversation_id is not None:
            previous = self.history.add(item)
            await self.emit(event("conversation.item.added", previous_item_id=previous, item=item.to_wire()))

    async def done(self, item: Item) -> None:
        """Announce that ``item`` is finished."""
        await self.event("response.output_item.done", item, item=item.to_wire())
        if self.history.conversation_id is not None:
            await self.emit(event("conversation.item.done", item=item.to_wire()))

    async def drop(self, item: Item) -> None:
        """Take back an item that never completed (a call whose arguments broke off): no dangling call stays."""
        item.status = "incomplete"
        if self.history.conversation_id is not None:
            self.history.remove(item)
            await self.emit(event("conversation.item.deleted", item_id=item.id))
        await self.event("response.output_item.done", item, item=item.to_wire())
        self.items.remove(item)

    async def event(self, kind: str, target: Item, **fields: Any) -> None:
        """Emit an event of type ``kind`` about the output item ``target``."""
        await self.emit(event(kind, response_id=self.response_id, item_id=target.id,
                              output_index=self.items.index(target), **fields))


class OutOfBand:
    """The history of a ``conversation: "none"`` response: its items join no conversation."""

    conversation_id: str | None = None

    def add(self, item: Item) -> str | None:
        return None

    def remove(self, item: Item) -> None:
        return None
