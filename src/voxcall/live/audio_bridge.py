"""The session's audio between the Live wire format and the session's PCM.

The client's audio is decoded from its wire format (PCM16, µ-law or A-law) to PCM at the wire's rate, which the
session resamples as it hears; muted input becomes silence of the same length: the voice hears nothing, and the
timeline goes on. The voice's audio comes at the session's output rate (24 kHz PCM16, or 8 kHz G.711) and is
encoded for the wire; PCM16 at 16 kHz, which only GPT-Live offers, is resampled to it on the way out (one stream
resampler, so that chunk edges do not click).
"""

from __future__ import annotations

import numpy as np

from voxcall.audio.codec import (
    PCM,
    AudioDecodeError,
    StreamResampler,
    decode_audio,
    encode_audio,
    pcm_duration_ms,
    resample,
)
from voxcall.audio.formats import PCM24K, AudioFormat
from voxcall.live.config import LiveConfig, LiveError


class AudioBridge:
    """Converts one session's input and output audio; ``muted`` silences the input."""

    def __init__(self, config: LiveConfig) -> None:
        self.core: AudioFormat = config.core_format
        self.wire_rate = config.wire_rate
        self.muted = False
        resampled = self.wire_rate != self.core.rate
        self._outward = StreamResampler(self.core.rate, self.wire_rate) if resampled else None

    def inward(self, audio: str) -> PCM:
        """A ``session.input_audio.append``'s audio as PCM at :attr:`wire_rate` (``LiveError`` for audio that does
        not decode)."""
        pcm = _decode(audio, self.core)  # the wire's encoding is the core format's, at any rate
        return np.zeros_like(pcm) if self.muted else pcm

    def outward(self, pcm: PCM) -> tuple[str, int]:
        """The voice's audio (at the core format's rate) in the wire format, and how long it plays (ms)."""
        if self._outward is not None:
            pcm = self._outward.process(pcm)
        return encode_audio(pcm, self.core), pcm_duration_ms(len(pcm), self.wire_rate)

    def fixture(self, audio: str) -> tuple[str, int]:
        """A fixture's audio in the wire format, and how long it plays (ms)."""
        pcm = resample(_decode(audio, PCM24K), PCM24K.rate, self.wire_rate)  # fixtures are PCM16 at 24 kHz
        return encode_audio(pcm, self.core), pcm_duration_ms(len(pcm), self.wire_rate)


def _decode(audio: str, fmt: AudioFormat) -> PCM:
    try:
        return decode_audio(audio, fmt)
    except AudioDecodeError as exc:
        raise LiveError(str(exc), param="audio") from None
