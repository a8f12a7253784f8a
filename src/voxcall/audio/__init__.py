"""Audio at the edge of voxcall: wire formats, G.711, base64 codecs, resampling and gain.

Everything inside voxcall passes audio as 1-D ``int16`` numpy arrays of mono samples; this package converts between
that and what clients send and expect.
"""

from __future__ import annotations

from voxcall.audio.codec import (
    PCM,
    AudioDecodeError,
    StreamResampler,
    apply_gain,
    decode_audio,
    encode_audio,
    pcm_duration_ms,
    resample,
)
from voxcall.audio.formats import PCM24K, PCMA, PCMU, AudioFormat, AudioFormatError, AudioKind, parse_format
from voxcall.audio.g711 import alaw_decode, alaw_encode, ulaw_decode, ulaw_encode

__all__ = [
    "PCM",
    "PCM24K",
    "PCMA",
    "PCMU",
    "AudioDecodeError",
    "AudioFormat",
    "AudioFormatError",
    "AudioKind",
    "StreamResampler",
    "alaw_decode",
    "alaw_encode",
    "apply_gain",
    "decode_audio",
    "encode_audio",
    "parse_format",
    "pcm_duration_ms",
    "resample",
    "ulaw_decode",
    "ulaw_encode",
]
