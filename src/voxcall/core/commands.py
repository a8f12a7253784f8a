"""What a session is told to do: typed commands, one small class each, named after the Realtime protocol's client
events (GA names), carried as Python values: audio as PCM samples at their rate, items and settings as objects.

A protocol edge decodes its frames into these (:meth:`~voxcall.core.session.Session.apply` runs one); a command
the session cannot act on raises :class:`~voxcall.core.errors.SessionError`, which the edge reports in its own
protocol, and the session goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from voxcall.audio.codec import PCM
from voxcall.core.conversation.items import Item
from voxcall.core.settings import SessionSettings


@dataclass(frozen=True, slots=True)
class AppendAudio:
    """``input_audio_buffer.append``: ``pcm`` heard from the user, at ``rate`` Hz."""

    pcm: PCM
    rate: int


@dataclass(frozen=True, slots=True)
class CommitAudio:
    """``input_audio_buffer.commit``: the held audio becomes a user item (push-to-talk); nothing is answered."""


@dataclass(frozen=True, slots=True)
class ClearAudio:
    """``input_audio_buffer.clear``: forget the held audio."""


@dataclass(frozen=True, slots=True)
class AddItem:
    """``conversation.item.create``: ``item`` joins the conversation after ``previous_item_id`` (``"root"``: first;
    None: last)."""

    item: Item
    previous_item_id: str | None = None


@dataclass(frozen=True, slots=True)
class DeleteItem:
    """``conversation.item.delete``."""

    item_id: str


@dataclass(frozen=True, slots=True)
class RetrieveItem:
    """``conversation.item.retrieve``: the session sends the item as it stands."""

    item_id: str


@dataclass(frozen=True, slots=True)
class TruncateItem:
    """``conversation.item.truncate``: the user heard the assistant's audio ``content_index`` of ``item_id`` up to
    ``audio_end_ms``; its transcript is cut to what was heard by then."""

    item_id: str
    content_index: int
    audio_end_ms: int


@dataclass(frozen=True, slots=True)
class Respond:
    """``response.create``: answer with ``settings`` (None: the session's own; an edge applies a request's overrides
    to the session's settings). ``out_of_band``: the response joins no conversation; ``input``: the items it reads
    instead of the conversation (items of the conversation among them); ``metadata`` is handed back with it."""

    settings: SessionSettings | None = None
    metadata: Mapping[str, str] | None = None
    out_of_band: bool = False
    input: tuple[Item, ...] | None = None


@dataclass(frozen=True, slots=True)
class Cancel:
    """``response.cancel``: stop the response running now (``response_id``, when given, must name it)."""

    response_id: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateSettings:
    """``session.update``: ``settings`` are the session's from now on (all of them, checked in full first)."""

    settings: SessionSettings


@dataclass(frozen=True, slots=True)
class ClearOutputAudio:
    """``output_audio_buffer.clear``: the speech the user hears stops now."""


Command = (AppendAudio | CommitAudio | ClearAudio | AddItem | DeleteItem | RetrieveItem | TruncateItem | Respond
           | Cancel | UpdateSettings | ClearOutputAudio)
"""Any command a session takes."""
