"""G.711 µ-law and A-law, vectorised: int16 PCM ⇄ one byte per sample.

The arithmetic is the ITU-T G.711 reference as written in Sun's public-domain ``g711.c`` (the same tables as
Python's old ``audioop``): µ-law works on the top 14 bits of a sample, A-law on the top 13. Every possible input is
computed once into a lookup table at import (64 K entries to encode, 256 to decode), so converting a buffer is a
single numpy indexing operation.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_ULAW_BIAS = 0x84  # 132: added before the segment search so every segment starts on a power of two
_ULAW_CLIP = 8159  # the largest 14-bit magnitude µ-law can represent (before the bias is added)


def _segment(magnitude: npt.NDArray[np.int32], first_end: int) -> npt.NDArray[np.int32]:
    """Index 0..8 of the segment (chord) holding each magnitude; segment k ends at ``(first_end + 1) << k``, minus 1."""
    ends = (first_end + 1) * (1 << np.arange(8, dtype=np.int32)) - 1
    return np.searchsorted(ends, magnitude, side="left").astype(np.int32)


def _build_ulaw_encode() -> npt.NDArray[np.uint8]:
    pcm = np.arange(-32768, 32768, dtype=np.int32) >> 2  # 14-bit
    mask = np.where(pcm < 0, 0x7F, 0xFF)
    magnitude = np.minimum(np.abs(pcm), _ULAW_CLIP) + (_ULAW_BIAS >> 2)
    seg = _segment(magnitude, 0x3F)
    code = np.where(seg >= 8, 0x7F, (seg << 4) | ((magnitude >> (seg + 1)) & 0x0F))  # segment 8: full scale
    return ((code ^ mask) & 0xFF).astype(np.uint8)


def _build_ulaw_decode() -> npt.NDArray[np.int16]:
    u = ~np.arange(256, dtype=np.int32) & 0xFF
    t = (((u & 0x0F) << 3) + _ULAW_BIAS) << ((u & 0x70) >> 4)
    return np.where(u & 0x80, _ULAW_BIAS - t, t - _ULAW_BIAS).astype(np.int16)


def _build_alaw_encode() -> npt.NDArray[np.uint8]:
    pcm = np.arange(-32768, 32768, dtype=np.int32) >> 3  # 13-bit
    mask = np.where(pcm >= 0, 0xD5, 0x55)
    magnitude = np.where(pcm >= 0, pcm, -pcm - 1)
    seg = _segment(magnitude, 0x1F)
    shift = np.where(seg < 2, 1, seg)
    code = (seg << 4) | ((magnitude >> shift) & 0x0F)
    return ((code ^ mask) & 0xFF).astype(np.uint8)  # magnitudes never exceed segment 7: no clipping needed


def _build_alaw_decode() -> npt.NDArray[np.int16]:
    a = np.arange(256, dtype=np.int32) ^ 0x55
    seg = (a & 0x70) >> 4
    t = ((a & 0x0F) << 4) + np.where(seg == 0, 8, 0x108)
    t = np.where(seg > 1, t << np.maximum(seg - 1, 0), t)
    return np.where(a & 0x80, t, -t).astype(np.int16)


_ULAW_ENCODE = _build_ulaw_encode()
_ULAW_DECODE = _build_ulaw_decode()
_ALAW_ENCODE = _build_alaw_encode()
_ALAW_DECODE = _build_alaw_decode()


def _table_index(pcm: npt.NDArray[np.int16]) -> npt.NDArray[np.intp]:
    """Position of each sample in a 64 K encode table that starts at -32768."""
    return np.asarray(pcm, dtype=np.int16).astype(np.intp) + 32768


def ulaw_encode(pcm: npt.NDArray[np.int16]) -> npt.NDArray[np.uint8]:
    """Encode int16 PCM to G.711 µ-law bytes (one per sample)."""
    return _ULAW_ENCODE[_table_index(pcm)]


def ulaw_decode(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.int16]:
    """Decode G.711 µ-law bytes to int16 PCM."""
    return _ULAW_DECODE[np.asarray(codes, dtype=np.uint8)]


def alaw_encode(pcm: npt.NDArray[np.int16]) -> npt.NDArray[np.uint8]:
    """Encode int16 PCM to G.711 A-law bytes (one per sample)."""
    return _ALAW_ENCODE[_table_index(pcm)]


def alaw_decode(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.int16]:
    """Decode G.711 A-law bytes to int16 PCM."""
    return _ALAW_DECODE[np.asarray(codes, dtype=np.uint8)]
