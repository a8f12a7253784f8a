"""The session's audio between the Live wire format and the core's.

G.711 and PCM16 at 24 kHz are the core's own formats and pass as they are; PCM16 at 16 kHz, which only GPT-Live
offers, is resampled to 24 kHz on the way in and back on the way out (a stream resampler each way, so that chunk
edges do not click). Muted input becomes silence of the same length: the voice hears nothing, and the timeline
goes on.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import (
    AudioDecodeError,
    StreamResampler,
    decode_audio,
    encode_audio,
    pcm_duration_ms,
    resample,
)
from voxcall.audio.formats import PCM24K, AudioFormat
from voxcall.live.config import LiveConfig, LiveError

FIXTURE_RATE = 24000
"""Output audio fixtures are PCM16 at 24 kHz, whatever the session's format."""


class AudioBridge:
    """Converts one session's input and output audio; ``muted`` silences the input."""

    def __init__(self, config: LiveConfig) -> None:
        self.core: AudioFormat = config.core_format
        self.wire_rate = config.wire_rate
        self.muted = False
        resampled = self.wire_rate != self.core.rate
        self._inward = StreamResampler(self.wire_rate, self.core.rate) if resampled else None
        self._outward = StreamResampler(self.core.rate, self.wire_rate) if resampled else None

    def inward(self, audio: str) -> str:
        """A ``session.input_audio.append``'s audio as the core's ``input_audio_buffer.append`` takes it
        (``LiveError`` for audio that does not decode)."""
        if self._inward is None and not self.muted:
            return audio  # the core decodes (and checks) it
        pcm = _decode(audio, self.core)  # PCM decodes alike at any rate
        if self.muted:
            pcm = np.zeros_like(pcm)
        return encode_audio(self._inward.process(pcm) if self._inward is not None else pcm, self.core)

    def outward(self, audio: str) -> tuple[str, int]:
        """A core output chunk in the wire format, and how long it plays (ms)."""
        if self._outward is None:
            return audio, pcm_duration_ms(len(decode_audio(audio, self.core)), self.core.rate)
        pcm = self._outward.process(decode_audio(audio, self.core))
        return encode_audio(pcm, self.core), pcm_duration_ms(len(pcm), self.wire_rate)

    def fixture(self, audio: str) -> tuple[str, int]:
        """A fixture's audio in the wire format, and how long it plays (ms)."""
        pcm = resample(_decode(audio, PCM24K), FIXTURE_RATE, self.wire_rate)
        return encode_audio(pcm, self.core), pcm_duration_ms(len(pcm), self.wire_rate)


def _decode(audio: str, fmt: AudioFormat) -> npt.NDArray[np.int16]:
    try:
        return decode_audio(audio, fmt)
    except AudioDecodeError as exc:
        raise LiveError(str(exc), param="audio") from None
