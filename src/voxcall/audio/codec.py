"""Wire audio ⇄ numpy PCM: base64 decoding and encoding in any :class:`AudioFormat`, resampling, gain, durations.

Inside voxcall audio is always a 1-D ``int16`` numpy array of mono samples; the wire format (and its rate) only
matters at the edge, here.
"""

from __future__ import annotations

import base64
import binascii

import numpy as np
import numpy.typing as npt
import soxr  # type: ignore[import-untyped]

from voxcall.audio.formats import AudioFormat
from voxcall.audio.g711 import alaw_decode, alaw_encode, ulaw_decode, ulaw_encode

PCM = npt.NDArray[np.int16]
"""Audio inside voxcall: mono ``int16`` samples (at a rate that travels with them)."""

_INT16_MIN, _INT16_MAX = -32768, 32767


class AudioDecodeError(ValueError):
    """Audio from a client could not be decoded: bad base64, or bytes that do not make whole samples."""


def decode_audio(b64: str, fmt: AudioFormat) -> npt.NDArray[np.int16]:
    """Decode base64 audio in ``fmt`` to int16 PCM at ``fmt.rate``.

    Decoding is strict: characters outside the base64 alphabet are an error rather than silently skipped, so a
    corrupted ``input_audio_buffer.append`` is reported instead of being heard as noise.
    """
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise AudioDecodeError(f"audio is not valid base64: {exc}") from exc
    if fmt.kind == "audio/pcm":
        if len(raw) % 2:
            raise AudioDecodeError(f"PCM16 audio must be a whole number of 2-byte samples, got {len(raw)} bytes")
        return np.frombuffer(raw, dtype="<i2").astype(np.int16)
    codes = np.frombuffer(raw, dtype=np.uint8)
    return ulaw_decode(codes) if fmt.kind == "audio/pcmu" else alaw_decode(codes)


def encode_audio(pcm: npt.NDArray[np.int16], fmt: AudioFormat) -> str:
    """Encode int16 PCM (already at ``fmt.rate``) to base64 in ``fmt``."""
    if pcm.dtype != np.int16:
        raise TypeError(f"encode_audio expects int16 samples, got {pcm.dtype}")
    if fmt.kind == "audio/pcm":
        raw = pcm.astype("<i2", copy=False).tobytes()
    elif fmt.kind == "audio/pcmu":
        raw = ulaw_encode(pcm).tobytes()
    else:
        raw = alaw_encode(pcm).tobytes()
    return base64.b64encode(raw).decode("ascii")


def resample(pcm: npt.NDArray[np.int16], src_rate: int, dst_rate: int) -> npt.NDArray[np.int16]:
    """Resample a whole int16 clip from ``src_rate`` to ``dst_rate`` with soxr (high quality); identity when equal.

    Each call starts a fresh filter, so for a live stream cut into chunks use :class:`StreamResampler` instead.
    """
    if src_rate == dst_rate:
        return pcm
    out: npt.NDArray[np.int16] = soxr.resample(pcm, src_rate, dst_rate, quality="HQ")
    return out


class StreamResampler:
    """Resample a stream that arrives in chunks, without clicks or drift at the chunk edges.

    soxr keeps its filter state between calls, so chunk-by-chunk output equals resampling the whole stream at once
    (minus a short filter delay that :meth:`flush` releases at the end).
    """

    def __init__(self, src_rate: int, dst_rate: int) -> None:
        self.src_rate = src_rate
        self.dst_rate = dst_rate
        self._stream = None if src_rate == dst_rate else soxr.ResampleStream(src_rate, dst_rate, 1, "int16", "HQ")

    def process(self, pcm: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
        """Resample the next chunk; the output may be a few samples shorter while the filter fills."""
        if self._stream is None:
            return pcm
        out: npt.NDArray[np.int16] = self._stream.resample_chunk(pcm)
        return out

    def flush(self) -> npt.NDArray[np.int16]:
        """End the stream: the samples still inside the filter. The resampler can't be used after this."""
        if self._stream is None:
            return np.zeros(0, dtype=np.int16)
        out: npt.NDArray[np.int16] = self._stream.resample_chunk(np.zeros(0, dtype=np.int16), last=True)
        return out


def apply_gain(pcm: npt.NDArray[np.int16], gain: float) -> npt.NDArray[np.int16]:
    """Scale int16 samples by ``gain``, rounding and clipping to the int16 range instead of wrapping around."""
    scaled = np.rint(pcm.astype(np.float32) * np.float32(gain))
    out: npt.NDArray[np.int16] = np.clip(scaled, _INT16_MIN, _INT16_MAX).astype(np.int16)
    return out


def pcm_duration_ms(samples: int, rate: int) -> int:
    """Whole milliseconds that ``samples`` samples last at ``rate`` Hz (rounded down, as Realtime events count)."""
    return samples * 1000 // rate
