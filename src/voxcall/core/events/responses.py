"""Events of a response: its lifecycle, its output items, and their content as it streams (text, transcript, audio).

A response's state travels as a :class:`ResponseState` snapshot, taken when the event is made: a hidden response's
events wait in its gate until the claim, while the response itself goes on. Audio is PCM (``int16`` samples) at its
format's rate; an edge encodes it for its wire, or plays it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from voxcall.audio.codec import PCM
from voxcall.audio.formats import AudioFormat
from voxcall.core.conversation.items import Item

Status = Literal["in_progress", "completed", "cancelled", "failed", "incomplete"]


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """The tokens a response used, over all its model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ResponseState:
    """A response as it stands: ``status_details`` says why it ended (``{"type": "cancelled", "reason": …}``,
    ``{"type": "failed", "error": {…}}``); ``conversation_id`` is None for a response out of band; ``usage`` is None
    while it runs."""

    id: str
    status: Status
    status_details: Mapping[str, Any] | None
    output: tuple[Item, ...]
    conversation_id: str | None
    output_modalities: tuple[str, ...]
    max_output_tokens: int | None
    metadata: Mapping[str, str] | None
    usage: TokenCounts | None


@dataclass(frozen=True, slots=True)
class ResponseCreated:
    """A response began."""

    response: ResponseState


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """A response ended: completed, incomplete, failed or cancelled, with every output item and the usage."""

    response: ResponseState


@dataclass(frozen=True, slots=True)
class OutputItemAdded:
    """The response's output gained ``item``, at ``output_index``."""

    response_id: str
    output_index: int
    item: Item


@dataclass(frozen=True, slots=True)
class OutputItemDone:
    """The output item at ``output_index`` is finished (or was taken back: status ``incomplete``)."""

    response_id: str
    output_index: int
    item: Item


@dataclass(frozen=True, slots=True)
class ContentPartAdded:
    """An assistant message's content part began: spoken (audio with a transcript) or written."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int
    spoken: bool
    text: str = ""


@dataclass(frozen=True, slots=True)
class ContentPartDone:
    """An assistant message's content part is finished; ``text`` is its text or its transcript."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int
    spoken: bool
    text: str


@dataclass(slots=True)  # not frozen: one per streamed delta, and a frozen __init__ costs 1 µs more
class OutputTextDelta:
    """More text of a written answer."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int
    delta: str


@dataclass(frozen=True, slots=True)
class OutputTextDone:
    """A written answer's whole text."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int
    text: str


@dataclass(slots=True)  # not frozen: one per streamed delta, and a frozen __init__ costs 1 µs more
class OutputTranscriptDelta:
    """More of a spoken answer's transcript, as the model writes it (ahead of its audio)."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int
    delta: str


@dataclass(frozen=True, slots=True)
class OutputTranscriptDone:
    """A spoken answer's whole transcript."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int
    transcript: str


@dataclass(slots=True)  # not frozen: one per streamed delta, and a frozen __init__ costs 1 µs more
class OutputAudio:
    """A chunk of a spoken answer's audio: ``pcm`` at ``fmt.rate``, for an edge to encode in ``fmt`` or play.
    ``start_ms`` is where it begins in the message's audio."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int
    pcm: PCM
    fmt: AudioFormat
    start_ms: int
    duration_ms: int


@dataclass(slots=True)  # not frozen: one per streamed delta, and a frozen __init__ costs 1 µs more
class SpokenClause:
    """A clause of a spoken answer, sent just before its audio: its text, and where its audio starts and ends in
    the message's audio (ms). An edge that shows the words as they are heard (GPT-Live's transcript, a device's
    subtitles) paces them with it; the Realtime protocol has no such event."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int
    text: str
    start_ms: int
    end_ms: int


@dataclass(frozen=True, slots=True)
class OutputAudioDone:
    """A spoken answer's audio is all out."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int


@dataclass(frozen=True, slots=True)
class OutputAudioCleared:
    """The speech of response ``response_id`` stopped where the user was (the client, or a barge-in, cleared it)."""

    response_id: str


@dataclass(frozen=True, slots=True)
class ToolTimes:
    """One server tool call of a response: how long it ran, and from its result to the next audio (None: not
    measured)."""

    call_id: str
    name: str
    duration_ms: int | None = None
    to_audio_ms: int | None = None


@dataclass(frozen=True, slots=True)
class ResponseTimed:
    """Where a response's time went (see :mod:`voxcall.core.responses.timing`): each stage in ms from its origin,
    and its server tool calls."""

    response_id: str
    stages_ms: Mapping[str, int]
    tools: tuple[ToolTimes, ...]
