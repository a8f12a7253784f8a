"""The audio formats a Realtime session speaks on the wire: PCM16 at 24 kHz, G.711 µ-law and A-law at 8 kHz.

Clients name them in two ways: the GA object form (``{"type": "audio/pcm", "rate": 24000}``) and the beta string
names (``"pcm16"``, ``"g711_ulaw"``, ``"g711_alaw"``). :func:`parse_format` accepts both; :meth:`AudioFormat.to_wire`
always answers in the GA form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

AudioKind = Literal["audio/pcm", "audio/pcmu", "audio/pcma"]
"""``audio/pcm``: 16-bit little-endian mono PCM; ``audio/pcmu``: G.711 µ-law; ``audio/pcma``: G.711 A-law."""

_RATES: dict[str, int] = {"audio/pcm": 24000, "audio/pcmu": 8000, "audio/pcma": 8000}
_BETA_NAMES: dict[str, str] = {"pcm16": "audio/pcm", "g711_ulaw": "audio/pcmu", "g711_alaw": "audio/pcma"}


class AudioFormatError(ValueError):
    """A client named an audio format voxcall does not speak."""


@dataclass(frozen=True)
class AudioFormat:
    """One wire audio format: its kind and its fixed sample rate (mono, always)."""

    kind: AudioKind
    rate: int

    def __post_init__(self) -> None:
        expected = _RATES.get(self.kind)
        if expected is None:
            raise AudioFormatError(f"unsupported audio format {self.kind!r}; expected one of {sorted(_RATES)}")
        if self.rate != expected:
            raise AudioFormatError(f"{self.kind} is only supported at {expected} Hz, not {self.rate} Hz")

    @property
    def sample_width(self) -> int:
        """Bytes per sample on the wire: 2 for PCM16, 1 for G.711."""
        return 2 if self.kind == "audio/pcm" else 1

    def to_wire(self) -> dict[str, Any]:
        """The GA object form, as sent in ``session.updated``: PCM carries its rate, G.711 formats do not."""
        if self.kind == "audio/pcm":
            return {"type": self.kind, "rate": self.rate}
        return {"type": self.kind}


PCM24K = AudioFormat("audio/pcm", 24000)
"""The Realtime default: PCM16 little-endian mono at 24 kHz."""
PCMU = AudioFormat("audio/pcmu", 8000)
"""G.711 µ-law at 8 kHz (telephony in North America and Japan)."""
PCMA = AudioFormat("audio/pcma", 8000)
"""G.711 A-law at 8 kHz (telephony elsewhere)."""

_BY_KIND: dict[str, AudioFormat] = {fmt.kind: fmt for fmt in (PCM24K, PCMU, PCMA)}


def parse_format(value: AudioFormat | Mapping[str, Any] | str) -> AudioFormat:
    """Read a client's audio format: the GA object form, a beta string name, or an :class:`AudioFormat` as is.

    Raises :class:`AudioFormatError` naming what was wrong, so the session can answer with an ``error`` event.
    """
    if isinstance(value, AudioFormat):
        return value
    if isinstance(value, str):
        kind = _BETA_NAMES.get(value)
        if kind is None:
            raise AudioFormatError(f"unsupported audio format {value!r}; expected one of {sorted(_BETA_NAMES)} "
                                   f"or an object such as {{'type': 'audio/pcm', 'rate': 24000}}")
        return _BY_KIND[kind]
    if isinstance(value, Mapping):
        unknown = set(value) - {"type", "rate"}
        if unknown:
            raise AudioFormatError(f"unknown audio format field(s) {sorted(unknown)}; expected 'type' and 'rate'")
        kind = value.get("type")
        if kind not in _BY_KIND:
            raise AudioFormatError(f"unsupported audio format type {kind!r}; expected one of {sorted(_BY_KIND)}")
        fmt = _BY_KIND[kind]
        rate = value.get("rate")
        if rate is None:  # the GA models make every field optional
            return fmt
        if isinstance(rate, bool) or not isinstance(rate, int) or rate != fmt.rate:
            raise AudioFormatError(f"{kind} is only supported at {fmt.rate} Hz, not {rate!r}")
        return fmt
    raise AudioFormatError(f"an audio format must be an object or a string, not {type(value).__name__}")
