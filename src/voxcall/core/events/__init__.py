"""What a session emits: typed events, one small class each, grouped by family.

The nouns are the OpenAI Realtime protocol's (GA names and item shapes), the medium is Python's: items and settings
as objects, audio as PCM samples, never JSON text or base64. A protocol edge encodes each event for its wire
(:mod:`voxcall.realtime.encode` writes the Realtime protocol's own events), plays it, or leaves it out.

- :mod:`~voxcall.core.events.session`: the settings changed;
- :mod:`~voxcall.core.events.conversation`: items added, done, deleted, retrieved, truncated;
- :mod:`~voxcall.core.events.hearing`: the input audio buffer, user turns, transcripts;
- :mod:`~voxcall.core.events.responses`: a response's lifecycle and its streamed output (text, transcript, audio);
- :mod:`~voxcall.core.events.tools`: call arguments, server tool progress, the tool ledger's moves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from voxcall.core.events.conversation import (
    UNSAID,
    ItemAdded,
    ItemDeleted,
    ItemDone,
    ItemRetrieved,
    ItemTruncated,
    Placement,
)
from voxcall.core.events.hearing import (
    AudioCleared,
    AudioCommitted,
    IdleTimedOut,
    SpeechStarted,
    SpeechStopped,
    TranscriptCompleted,
    TranscriptDelta,
    TranscriptFailed,
    TurnCapped,
)
from voxcall.core.events.responses import (
    ContentPartAdded,
    ContentPartDone,
    OutputAudio,
    OutputAudioCleared,
    OutputAudioDone,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    OutputTextDone,
    OutputTranscriptDelta,
    OutputTranscriptDone,
    ResponseCreated,
    ResponseDone,
    ResponseState,
    ResponseTimed,
    SpokenClause,
    TokenCounts,
    ToolTimes,
)
from voxcall.core.events.session import SettingsApplied
from voxcall.core.events.tools import (
    ArgumentsDelta,
    ArgumentsDone,
    CallState,
    ServerCallProgress,
    ToolCallMoved,
    ToolCallRejected,
)

Event = (SettingsApplied | ItemAdded | ItemDone | ItemDeleted | ItemRetrieved | ItemTruncated | SpeechStarted
         | SpeechStopped | TurnCapped | AudioCommitted | AudioCleared | IdleTimedOut | TranscriptDelta
         | TranscriptCompleted | TranscriptFailed | ResponseCreated | ResponseDone | OutputItemAdded | OutputItemDone
         | ContentPartAdded | ContentPartDone | OutputTextDelta | OutputTextDone | OutputTranscriptDelta
         | OutputTranscriptDone | OutputAudio | SpokenClause | OutputAudioDone | OutputAudioCleared | ResponseTimed
         | ArgumentsDelta | ArgumentsDone | ServerCallProgress | ToolCallMoved | ToolCallRejected)
"""Any event a session emits."""

Emit = Callable[[Event], Awaitable[None]]
"""Where a session's (or one response's) events go, in order."""

__all__ = [
    "UNSAID",
    "ArgumentsDelta",
    "ArgumentsDone",
    "AudioCleared",
    "AudioCommitted",
    "CallState",
    "ContentPartAdded",
    "ContentPartDone",
    "Emit",
    "Event",
    "IdleTimedOut",
    "ItemAdded",
    "ItemDeleted",
    "ItemDone",
    "ItemRetrieved",
    "ItemTruncated",
    "OutputAudio",
    "OutputAudioCleared",
    "OutputAudioDone",
    "OutputItemAdded",
    "OutputItemDone",
    "OutputTextDelta",
    "OutputTextDone",
    "OutputTranscriptDelta",
    "OutputTranscriptDone",
    "Placement",
    "ResponseCreated",
    "ResponseDone",
    "ResponseState",
    "ResponseTimed",
    "ServerCallProgress",
    "SettingsApplied",
    "SpeechStarted",
    "SpeechStopped",
    "SpokenClause",
    "TokenCounts",
    "ToolCallMoved",
    "ToolCallRejected",
    "ToolTimes",
    "TranscriptCompleted",
    "TranscriptDelta",
    "TranscriptFailed",
    "TurnCapped",
]
