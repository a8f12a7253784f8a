"""The user's speech itself, for a model that hears it (``audio_input: direct``).

In direct mode a spoken turn is kept on its user item as a WAV file (16 kHz mono, base64:
:attr:`~voxcall.core.conversation.items.MessageItem.heard_wav`) and the model is sent that instead of a transcript, so a
response need not wait for speech-to-text; the transcript is still made, for the client. The audio kept is
bounded: past ``session.max_direct_audio_bytes`` the oldest turns lose theirs and the model reads their
transcripts (:func:`keep_recent_audio`). The backend must take audio (:func:`~voxcall.llm.media_of`): a server
refuses to start otherwise, and a session that asks for it is refused.
"""

from __future__ import annotations

import base64
import io
import wave
from collections.abc import Iterable

from voxcall.audio.codec import PCM
from voxcall.core.conversation.items import Item, MessageItem
from voxcall.speech.stt import SAMPLE_RATE


def wav_base64(pcm: PCM) -> str:
    """``pcm`` (16 kHz mono int16) as a base64 WAV file, the form Chat Completions ``input_audio`` takes."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(pcm.tobytes())
    return base64.b64encode(out.getvalue()).decode("ascii")


def keep_recent_audio(items: Iterable[Item], max_bytes: int) -> None:
    """Drop the kept audio of the oldest turns until the rest is at most ``max_bytes`` of WAV (as base64 text);
    the newest turn keeps its audio whatever its size."""
    total, full = 0, False
    for item in reversed(list(items)):
        if isinstance(item, MessageItem) and item.heard_wav is not None:
            full = full or (total > 0 and total + len(item.heard_wav) > max_bytes)
            if full:
                item.heard_wav = None
            else:
                total += len(item.heard_wav)
